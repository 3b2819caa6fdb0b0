/**
 * `POST /v1/responses` (docs/openai-compatible.md "Responses API"): OpenAI's Responses API over
 * the same run as Chat Completions (`openAiModelRunner`): the request becomes a prompt or skill run
 * in openai-responses-request.ts, the stored run a `response` object in openai-responses-answer.ts
 * or, with `stream: true`, the Responses events in openai-responses-stream.ts. Errors leave in
 * OpenAI's error shape; outside /api, not in the OpenAPI document (as Chat Completions).
 */

import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { openAiErrorOf } from "./openai-errors.js";
import { openAiModelRunner, openEventStream, replyWithRun } from "./openai-model-run.js";
import { responseOf } from "./openai-responses-answer.js";
import { withReferencesResolved } from "./openai-responses-references.js";
import { responsesRequestOf } from "./openai-responses-request.js";
import { deltasOfLive, deltasOfRun, type RunDelta, writeResponseEvents } from "./openai-responses-stream.js";
import { firstOfStream } from "./openai-run-stream.js";

export function registerOpenAiResponsesRoute(app: GatewayApp, deps: GatewayDeps): void {
  const runner = openAiModelRunner(deps);
  const { execution } = deps.clients;

  app.post("/v1/responses", { schema: { hide: true } }, async (request, reply) => {
    const readRun = async (id: string) => {
      try {
        return (await execution.getRun({ id, kind: "" }, rpcOptions(request))).run;
      } catch (e) {
        if (e instanceof ConnectError && e.code === Code.NotFound) return undefined;
        throw e;
      }
    };
    const call = responsesRequestOf(await withReferencesResolved(request.body, readRun));
    const target = await runner.target(request, call);
    const abort = new AbortController();
    const events = call.stream ? runner.stream(request, call, target, abort.signal) : undefined;
    if (!events) {
      const done = await runner.run(request, call, target);
      replyWithRun(reply, done);
      if (!call.stream) return responseOf(done, call.model);
      // A run that is whole (a skill, an idempotent request): its deltas come from the stored run.
      return writeStream(request, reply, done, call.model, deltasOfRun(done), abort);
    }
    // A prompt streams as its model answers: nothing is sent until its first piece, so a refusal
    // or a run that fails before answering is still a JSON error.
    reply.raw.on("close", () => {
      if (!reply.raw.writableFinished) abort.abort(new Error("the client closed the stream"));
    });
    const { runId, first } = await firstOfStream(events, target.refusal);
    reply.header("x-kiln-run-id", runId);
    if (first.type === "done") replyWithRun(reply, first.run);
    return writeStream(request, reply, { id: runId }, call.model, deltasOfLive(first, events), abort);
  });
}

/** The Responses events of `deltas` on the hijacked reply; a failure midway ends it with an `error` event. */
async function writeStream(
  request: FastifyRequest,
  reply: FastifyReply,
  started: { id: string; createdAt?: Timestamp },
  model: string,
  deltas: AsyncIterable<RunDelta>,
  abort: AbortController,
): Promise<FastifyReply> {
  const raw = openEventStream(request, reply);
  try {
    await writeResponseEvents(started, model, deltas, (text) => raw.write(text));
    raw.end();
  } catch (e) {
    if (abort.signal.aborted || raw.destroyed) return reply;
    const { error } = openAiErrorOf(e, request.id).body;
    raw.end(
      `event: error\ndata: ${JSON.stringify({ type: "error", code: error.code, message: error.message, param: error.param })}\n\n`,
    );
  }
  return reply;
}
