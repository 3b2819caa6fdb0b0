/**
 * Anthropic Messages' streaming events (docs/anthropic-compatible.md "Streaming"), written from
 * the deltas of a run (openai-call-deltas.ts): `message_start` (the message without content),
 * per content block `content_block_start`, its `content_block_delta`s (`text_delta`, or one
 * `input_json_delta` with a call's whole input) and `content_block_stop`, a `ping` after the first
 * block starts, then `message_delta` with the stop reason and the usage, and `message_stop`. A run
 * that failed ends the stream with an `error` event.
 */
import type { Run } from "@kiln/proto/execution";
import { anthropicErrorOf } from "./anthropic-errors.js";
import { anthropicUsageOf, messageBase, stopReasonOf, textBlock } from "./anthropic-messages-answer.js";
import { chatAnswerOf, failedRunError } from "./openai-chat-answer.js";
import type { RunDelta } from "./openai-responses-stream.js";

/** One event as Server-Sent Events text. */
const sse = (event: { type: string }) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

/** The `error` event ending a stream that failed midway. */
export const errorEventOf = (error: unknown, requestId: string) => sse(anthropicErrorOf(error, requestId).body);

/**
 * Writes the events of `deltas` for the message of `started` (the run as it started: its id, and
 * its usage when it is whole already) through `write`, in order; resolves after the last event.
 */
export async function writeMessageEvents(
  started: Pick<Run, "id" | "usage">,
  model: string,
  requestId: string,
  deltas: AsyncIterable<RunDelta>,
  write: (text: string) => void,
): Promise<void> {
  const emit = (type: string, fields: Record<string, unknown> = {}) => write(sse({ type, ...fields }));
  // A live run's input tokens are known at its end only: message_delta carries them then.
  const { input_tokens } = anthropicUsageOf(started);
  const usage = { input_tokens, output_tokens: 0 };
  emit("message_start", {
    message: { ...messageBase(started, model), content: [], stop_reason: null, stop_sequence: null, usage },
  });

  let index = -1;
  let textOpen = false;
  const start = (block: unknown) => {
    index += 1;
    emit("content_block_start", { index, content_block: block });
    if (index === 0) emit("ping");
  };
  const stopText = () => {
    if (textOpen) emit("content_block_stop", { index });
    textOpen = false;
  };

  for await (const delta of deltas) {
    if (delta.type === "text") {
      if (!textOpen) start(textBlock(""));
      textOpen = true;
      emit("content_block_delta", { index, delta: { type: "text_delta", text: delta.delta } });
    } else if (delta.type === "tool_call") {
      stopText();
      start({ type: "tool_use", id: delta.id, name: delta.name, input: {} });
      emit("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: delta.arguments } });
      emit("content_block_stop", { index });
    } else {
      const { run } = delta;
      if (run.status !== "succeeded" || run.output === undefined) {
        stopText();
        write(sse(anthropicErrorOf(failedRunError(run), requestId).body));
        return;
      }
      const answer = chatAnswerOf(run);
      // A run that answered nothing at all still answers its (empty) text, as the whole message does.
      if (index < 0 && answer.content !== null) {
        start(textBlock(""));
        textOpen = true;
      }
      stopText();
      emit("message_delta", {
        delta: { stop_reason: stopReasonOf(answer), stop_sequence: null },
        usage: anthropicUsageOf(run),
      });
      emit("message_stop");
      return;
    }
  }
}
