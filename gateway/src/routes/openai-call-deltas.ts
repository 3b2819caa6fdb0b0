/**
 * The answer of a model call for the routes that write their own event streams (the Responses API,
 * docs/openai-compatible.md; Anthropic Messages, docs/anthropic-compatible.md): the stored run
 * without `stream`, else the run's deltas, live as a prompt's model answers or from the stored run
 * when it runs whole (a skill, an idempotent request). Nothing is sent until the first piece, so a
 * refusal or a run that fails before answering is still thrown (the route's JSON error); the
 * writer then owns the hijacked reply, and a failure midway ends it with the route's error event.
 */
import type { Run } from "@kiln/proto/execution";
import type { FastifyReply, FastifyRequest } from "fastify";
import { replyCacheStatus } from "../http/cache-header.js";
import { type ModelRunCall, type openAiModelRunner, openEventStream, replyWithRun } from "./openai-model-run.js";
import { deltasOfLive, deltasOfRun, type RunDelta } from "./openai-responses-stream.js";
import { firstOfStream } from "./openai-run-stream.js";

type CallAnswer =
  | { stream: false; run: Run }
  | { stream: true; started: Pick<Run, "id" | "createdAt" | "usage">; deltas: AsyncIterable<RunDelta> };

/** Runs `call`; `abort` aborts when the client goes away from a live stream (the run is cancelled). */
async function answerOfCall(
  runner: ReturnType<typeof openAiModelRunner>,
  request: FastifyRequest,
  reply: FastifyReply,
  call: ModelRunCall & { stream: boolean },
  abort: AbortController,
): Promise<CallAnswer> {
  const target = await runner.target(request, call);
  const events = call.stream ? runner.stream(request, call, target, abort.signal) : undefined;
  if (!events) {
    const run = await runner.run(request, call, target);
    replyWithRun(reply, run);
    return call.stream ? { stream: true, started: run, deltas: deltasOfRun(run) } : { stream: false, run };
  }
  reply.raw.on("close", () => {
    if (!reply.raw.writableFinished) abort.abort(new Error("the client closed the stream"));
  });
  const { runId, cacheStatus, first } = await firstOfStream(events, target.refusal);
  reply.header("x-kiln-run-id", runId);
  replyCacheStatus(reply, cacheStatus);
  if (first.type === "done") replyWithRun(reply, first.run);
  return { stream: true, started: { id: runId }, deltas: deltasOfLive(first, events) };
}

/** How a route answers a call: the JSON of a whole run, or the events of its deltas. */
export interface CallWriters {
  call: ModelRunCall & { stream: boolean };
  /** The answer of a run without `stream`. */
  whole(run: Run): unknown;
  /** Writes the events of the run's deltas through `send`, in order. */
  events(
    started: Pick<Run, "id" | "createdAt" | "usage">,
    deltas: AsyncIterable<RunDelta>,
    send: (text: string) => void,
  ): Promise<void>;
  /** The event text ending a stream that failed midway (not the client going away). */
  errorEvent(error: unknown): string;
}

/** Runs the call and answers it (see above), a stream on the hijacked reply as Server-Sent Events. */
export async function answerCall(
  runner: ReturnType<typeof openAiModelRunner>,
  request: FastifyRequest,
  reply: FastifyReply,
  writers: CallWriters,
): Promise<unknown> {
  const abort = new AbortController();
  const answer = await answerOfCall(runner, request, reply, writers.call, abort);
  if (!answer.stream) return writers.whole(answer.run);
  const raw = openEventStream(request, reply);
  try {
    await writers.events(answer.started, answer.deltas, (text) => raw.write(text));
    raw.end();
  } catch (e) {
    if (abort.signal.aborted || raw.destroyed) return reply;
    raw.end(writers.errorEvent(e));
  }
  return reply;
}
