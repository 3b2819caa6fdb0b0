/**
 * `POST /api/prompts/:id/run/stream` (docs/api.md "Streaming a prompt run"): the run of
 * `POST /api/prompts/:id/run`, answered as Server-Sent Events while the model answers, over the
 * execution service's StreamPromptRun (openai-run-stream.ts), under /api so that the console's
 * cookie session (and its CSRF rule) applies as to every write. A request the run refuses gets the
 * JSON error it gets without streaming; once the run has started: `start`, a `text` event per
 * piece, then `done` with the stored run. A client that goes away cancels the run, which is stored
 * failed with error code `cancelled` and the text received so far.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import Type from "typebox";
import { envelopeOf } from "../errors.js";
import { CacheRequestHeaders, CacheStatusResponseHeaders, replyCacheStatus } from "../http/cache-header.js";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { operation } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { ref } from "../schemas.js";
import { IdParams } from "./catalog-requests.js";
import { openEventStream } from "./openai-model-run.js";
import { promptRunStream, type RunStreamEvent } from "./openai-run-stream.js";
import { PromptRunBody, promptRunRequest, runErrors } from "./run-routes.js";
import { promptRunView } from "./run-view-mappers.js";
import { PromptRunStreamEventView } from "./run-views.js";

const send = (reply: FastifyReply, event: unknown) => reply.raw.write(`data: ${JSON.stringify(event)}\n\n`);

export function registerPromptRunStreamRoute(app: GatewayApp, deps: GatewayDeps): void {
  const { execution } = deps.clients;
  app.post(
    "/api/prompts/:id/run/stream",
    operation(
      { tags: ["runs"], stability: "beta" },
      "streamPromptRun",
      "Run a prompt and stream its answer as Server-Sent Events",
      {
        params: IdParams,
        headers: Type.Object(CacheRequestHeaders),
        body: PromptRunBody,
        response: {
          200: {
            description: "Server-Sent Events; the data of each is a PromptRunStreamEvent",
            headers: CacheStatusResponseHeaders,
            content: { "text/event-stream": { schema: ref(PromptRunStreamEventView) } },
          },
          ...runErrors,
        },
      },
    ),
    async (request, reply) => {
      const abort = new AbortController();
      reply.raw.on("close", () => {
        if (!reply.raw.writableFinished) abort.abort(new Error("the client closed the stream"));
      });
      // A stream is not replayed: the run takes no Idempotency-Key.
      const { headers, ...options } = rpcOptions(request);
      const { "idempotency-key": _key, ...rest } = (headers ?? {}) as Record<string, string>;
      const events = promptRunStream(execution, promptRunRequest(request, request.params.id, request.body), {
        ...options,
        headers: rest,
        signal: abort.signal,
      })[Symbol.asyncIterator]();
      // Until the run has started, a refusal is answered as JSON (the error handler's contract shape).
      const first = await events.next();
      if (first.done) throw new Error("the run stream ended without the run");
      return streamRun(request, reply, first.value, events, abort.signal);
    },
  );
}

async function streamRun(
  request: FastifyRequest,
  reply: FastifyReply,
  first: RunStreamEvent,
  events: AsyncIterator<RunStreamEvent>,
  aborted: AbortSignal,
): Promise<FastifyReply> {
  if (first.type === "start") replyCacheStatus(reply, first.cacheStatus);
  openEventStream(request, reply);
  try {
    let event = first;
    for (;;) {
      if (event.type === "start") send(reply, { type: "start", runId: event.runId });
      else if (event.type === "text") send(reply, { type: "text", delta: event.delta });
      else if (event.type === "done") {
        reply.raw.end(`data: ${JSON.stringify({ type: "done", run: promptRunView(event.run) })}\n\n`);
        return reply;
      }
      const step = await events.next();
      if (step.done) throw new Error("the run stream ended without the run");
      event = step.value;
    }
  } catch (e) {
    if (!aborted.aborted && !reply.raw.destroyed) {
      request.log.error({ err: e }, "a prompt run's stream broke off");
      const { error } = envelopeOf(e, request.id).body;
      reply.raw.end(
        `data: ${JSON.stringify({ type: "error", error: { code: error.code, message: error.message } })}\n\n`,
      );
    }
    return reply;
  }
}
