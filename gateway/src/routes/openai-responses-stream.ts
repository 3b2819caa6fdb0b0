/**
 * The Responses API's streaming events (docs/openai-compatible.md "Responses API"), written from
 * the deltas of a run: `response.created`, `response.in_progress`, then per output item its
 * `added` / part / delta / `done` events, and `response.completed` (or `response.incomplete`, or
 * `response.failed`) with the whole response, usage and cost included. Each event carries its
 * `sequence_number`. The writer takes any source of deltas; `deltasOfRun` makes one of a completed
 * run (execution answers whole runs today: its text is one delta).
 */
import type { Run } from "@kiln/proto/execution";
import { chatAnswerOf } from "./openai-chat-answer.js";
import {
  functionCallItem,
  messageItem,
  messageItemId,
  responseBase,
  responseOf,
  textPart,
} from "./openai-responses-answer.js";
import type { RunStreamEvent } from "./openai-run-stream.js";

/** What a run yields while it runs: text, a call to a caller's tool, and the stored run at the end. */
export type RunDelta =
  | { type: "text"; delta: string }
  | { type: "tool_call"; id: string; name: string; arguments: string }
  | { type: "done"; run: Run };

/** The deltas of a run that completed already: its whole text, its calls, the run. */
export async function* deltasOfRun(run: Run): AsyncIterable<RunDelta> {
  const answer = chatAnswerOf(run);
  if (answer.content !== null && answer.content !== "") yield { type: "text", delta: answer.content };
  for (const call of answer.toolCalls) {
    yield { type: "tool_call", id: call.id, name: call.function.name, arguments: call.function.arguments };
  }
  yield { type: "done", run };
}

/**
 * The deltas of a run as it streams (openai-run-stream.ts), from its first event after `start`:
 * text as it comes; a call of the caller's tools, which arrives in pieces, whole once the run is done.
 */
export async function* deltasOfLive(
  first: Exclude<RunStreamEvent, { type: "start" }>,
  rest: AsyncIterator<RunStreamEvent>,
): AsyncIterable<RunDelta> {
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  for (let event: RunStreamEvent = first; ; ) {
    if (event.type === "text") yield event;
    else if (event.type === "tool_call") {
      const call = calls.get(event.index) ?? { id: "", name: "", arguments: "" };
      calls.set(event.index, {
        id: event.id || call.id,
        name: event.name || call.name,
        arguments: call.arguments + event.arguments,
      });
    } else if (event.type === "done") {
      for (const [, call] of [...calls].sort(([a], [b]) => a - b)) yield { type: "tool_call", ...call };
      yield event;
      return;
    }
    const step = await rest.next();
    if (step.done) throw new Error("the run stream ended without the run");
    event = step.value;
  }
}

/** One event as Server-Sent Events text. */
const sse = (event: { type: string; [field: string]: unknown }) =>
  `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

/**
 * Writes the events of `deltas` for the response `run` (the run as it started: its id and time)
 * through `write`, in order; resolves after the last event.
 */
export async function writeResponseEvents(
  started: Pick<Run, "id" | "createdAt">,
  model: string,
  deltas: AsyncIterable<RunDelta>,
  write: (text: string) => void,
): Promise<void> {
  let sequence = 0;
  const emit = (type: string, fields: Record<string, unknown>) =>
    write(sse({ type, ...fields, sequence_number: sequence++ }));
  const pending = { ...responseBase(started, model), status: "in_progress", output: [], usage: null };
  emit("response.created", { response: pending });
  emit("response.in_progress", { response: pending });

  let outputIndex = -1;
  /** The message item being written, and its text so far. */
  let open: { id: string; index: number; text: string } | undefined;
  const openMessage = () => {
    outputIndex += 1;
    open = { id: messageItemId(started), index: outputIndex, text: "" };
    emit("response.output_item.added", { output_index: outputIndex, item: messageItem(started, undefined) });
    const at = { item_id: open.id, output_index: outputIndex, content_index: 0 };
    emit("response.content_part.added", { ...at, part: textPart("") });
  };
  const closeMessage = () => {
    if (!open) return;
    const at = { item_id: open.id, output_index: open.index, content_index: 0 };
    emit("response.output_text.done", { ...at, text: open.text, logprobs: [] });
    emit("response.content_part.done", { ...at, part: textPart(open.text) });
    emit("response.output_item.done", { output_index: open.index, item: messageItem(started, open.text) });
    open = undefined;
  };

  for await (const delta of deltas) {
    if (delta.type === "text") {
      if (!open) openMessage();
      if (!open) continue;
      open.text += delta.delta;
      const at = { item_id: open.id, output_index: open.index, content_index: 0 };
      emit("response.output_text.delta", { ...at, delta: delta.delta, logprobs: [] });
    } else if (delta.type === "tool_call") {
      closeMessage();
      outputIndex += 1;
      const item = functionCallItem(delta, "in_progress");
      const at = { item_id: item.id, output_index: outputIndex };
      emit("response.output_item.added", { output_index: outputIndex, item });
      emit("response.function_call_arguments.delta", { ...at, delta: delta.arguments });
      emit("response.function_call_arguments.done", { ...at, name: delta.name, arguments: delta.arguments });
      emit("response.output_item.done", { output_index: outputIndex, item: functionCallItem(delta, "completed") });
    } else {
      const { run } = delta;
      if (run.status !== "succeeded" || run.output === undefined) {
        closeMessage();
        const error = { code: run.error?.code ?? "run_failed", message: run.error?.message ?? "the run failed" };
        emit("response.failed", {
          response: { ...responseBase(run, model), status: "failed", error, output: [], usage: null },
        });
        return;
      }
      const response = responseOf(run, model);
      // A run that answered nothing at all still answers its (empty) message, as the whole response does.
      if (outputIndex < 0 && response.output.some((item) => item.type === "message")) openMessage();
      closeMessage();
      emit(response.status === "incomplete" ? "response.incomplete" : "response.completed", { response });
      return;
    }
  }
}
