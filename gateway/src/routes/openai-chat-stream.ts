/**
 * `stream: true` on /v1/chat/completions (docs/openai-compatible.md "Streaming"): server-sent
 * `chat.completion.chunk` events. A prompt run streams as its model answers (openai-run-stream.ts):
 * the role chunk and each piece leave as they arrive, then the finish chunk, the usage chunk (usage
 * and Kiln's `cost_usd`) when `stream_options.include_usage` asks, and `data: [DONE]`. Until the
 * first piece arrives nothing is sent, so a refused request or a run that fails before answering
 * gets the same JSON error as without streaming; a failure after it ends the stream with an
 * `error` event, as OpenAI does. A run that is already whole (a skill run, a replayed idempotent
 * request) leaves as the same chunks at once.
 */
import type { Run } from "@kiln/proto/execution";
import type { FastifyReply, FastifyRequest } from "fastify";
import { replyCacheStatus } from "../http/cache-header.js";
import { type ChunkHead, chatAnswerOf, chunkOf, chunksOf, failedRunError, usageChunkOf } from "./openai-chat-answer.js";
import { openAiErrorOf } from "./openai-errors.js";
import { openEventStream, replyWithRun } from "./openai-model-run.js";
import { firstOfStream, type RunStreamEvent } from "./openai-run-stream.js";

const send = (reply: FastifyReply, event: unknown) => reply.raw.write(`data: ${JSON.stringify(event)}\n\n`);

/** A completed, succeeded run as a stream of chunks. */
export function sendWholeRun(
  request: FastifyRequest,
  reply: FastifyReply,
  run: Run,
  model: string,
  includeUsage: boolean,
): FastifyReply {
  const answer = chatAnswerOf(run);
  openEventStream(request, reply);
  for (const event of chunksOf(run, model, answer, includeUsage)) send(reply, event);
  reply.raw.end("data: [DONE]\n\n");
  return reply;
}

export interface LiveStream {
  events: AsyncIterator<RunStreamEvent>;
  model: string;
  includeUsage: boolean;
  /** Aborted when the client goes away: cancels the run. */
  abort: AbortController;
  /** A failure before anything was sent, as the route answers it (OpenAI's JSON error). */
  refused: (error: unknown) => unknown;
}

/** Streams a prompt run as it runs (see above). */
export async function sendLiveRun(
  request: FastifyRequest,
  reply: FastifyReply,
  live: LiveStream,
): Promise<FastifyReply> {
  const { events, abort } = live;
  reply.raw.on("close", () => {
    if (!reply.raw.writableFinished) abort.abort(new Error("the client closed the stream"));
  });
  const { runId, cacheStatus, first } = await firstOfStream(events, live.refused);
  reply.header("x-kiln-run-id", runId);
  replyCacheStatus(reply, cacheStatus);
  if (first.type === "done") {
    // Nothing streamed: the answer is whole, or the run failed before the model said anything.
    replyWithRun(reply, first.run);
    return sendWholeRun(request, reply, first.run, live.model, live.includeUsage);
  }

  const head: ChunkHead = {
    id: runId,
    created: Math.floor(Date.now() / 1000),
    model: live.model,
    includeUsage: live.includeUsage,
  };
  openEventStream(request, reply);
  send(reply, chunkOf(head, { role: "assistant", content: "" }, null));
  try {
    let event: RunStreamEvent = first;
    for (;;) {
      if (event.type === "text") send(reply, chunkOf(head, { content: event.delta }, null));
      else if (event.type === "tool_call") send(reply, chunkOf(head, { tool_calls: [toolCallDelta(event)] }, null));
      else if (event.type === "done") return finish(reply, head, event.run);
      const step = await events.next();
      if (step.done) throw new Error("the run stream ended without the run");
      event = step.value;
    }
  } catch (e) {
    if (abort.signal.aborted) return reply;
    if (!reply.raw.destroyed) reply.raw.end(`data: ${JSON.stringify(openAiErrorOf(e, request.id).body)}\n\n`);
    return reply;
  }
}

function toolCallDelta(event: Extract<RunStreamEvent, { type: "tool_call" }>) {
  return {
    index: event.index,
    ...(event.id ? { id: event.id, type: "function" } : {}),
    function: { ...(event.name ? { name: event.name } : {}), arguments: event.arguments },
  };
}

/** The end of a live stream: the finish and usage chunks, or the error of a run that failed midway. */
function finish(reply: FastifyReply, head: ChunkHead, run: Run): FastifyReply {
  if (run.status !== "succeeded" || run.output === undefined) {
    reply.raw.end(`data: ${JSON.stringify(failedRunError(run).body)}\n\n`);
    return reply;
  }
  const answer = chatAnswerOf(run);
  send(reply, chunkOf(head, {}, answer.finishReason));
  if (head.includeUsage) send(reply, usageChunkOf(head, answer.usage));
  reply.raw.end("data: [DONE]\n\n");
  return reply;
}
