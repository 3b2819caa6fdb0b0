/**
 * A streamed Responses API answer (`stream: true`): the server-sent events parsed with
 * eventsource-parser, text (`response.output_text.delta`) and function calls
 * (`response.output_item.added` with the call's `call_id` and name, then
 * `response.function_call_arguments.delta`) handed on as they arrive, a function call's `index`
 * counting function calls only. The turn is the `response` of `response.completed` or
 * `response.incomplete`, read by the same `toResponsesResult` as a plain answer; its `output` is
 * the streamed items' when an endpoint sends it empty. `response.failed`, an `error` event, a
 * chunk that is not JSON or a stream that ends before its final event rejects with
 * BrokenStreamError.
 */
import { createParser } from "eventsource-parser";
import type { ResponseOutputItem, ResponseStreamEvent } from "openai/resources/responses/responses";
import type { ResponsesAnswer } from "./openai-responses-result.js";
import type { ModelDelta } from "./provider.js";
import { BrokenStreamError } from "./remote-call.js";

/** The items of one streamed turn by `output_index`, as far as they have arrived. */
function createItemAssembler(onDelta: (delta: ModelDelta) => void) {
  const items = new Map<number, ResponseOutputItem>();
  const texts = new Map<number, string>();
  const callIndex = new Map<number, number>();

  function add(event: ResponseStreamEvent): void {
    switch (event.type) {
      case "response.output_item.added": {
        const { item, output_index: at } = event;
        items.set(at, item);
        if (item.type !== "function_call") return;
        const index = callIndex.size;
        callIndex.set(at, index);
        onDelta({ type: "tool_call", index, id: item.call_id, name: item.name, arguments: item.arguments ?? "" });
        return;
      }
      case "response.output_text.delta":
        if (event.delta === "") return;
        texts.set(event.output_index, (texts.get(event.output_index) ?? "") + event.delta);
        onDelta({ type: "text", text: event.delta });
        return;
      case "response.function_call_arguments.delta": {
        const index = callIndex.get(event.output_index);
        const item = items.get(event.output_index);
        if (index === undefined || item?.type !== "function_call") return;
        item.arguments = (item.arguments ?? "") + event.delta;
        onDelta({ type: "tool_call", index, arguments: event.delta });
        return;
      }
      case "response.output_item.done":
        items.set(event.output_index, event.item);
        texts.delete(event.output_index);
        return;
    }
  }

  /** The output as streamed: each item as it was done, or as far as its pieces went. */
  function output(): ResponseOutputItem[] {
    return [...items.entries()]
      .sort(([a], [b]) => a - b)
      .map(([at, item]) => {
        const text = texts.get(at);
        if (item.type !== "message" || text === undefined) return item;
        return { ...item, content: [{ type: "output_text" as const, text, annotations: [] }] };
      });
  }

  return { add, output };
}

type Final = Extract<ResponseStreamEvent, { type: "response.completed" | "response.incomplete" }>["response"];

/** Reads a `text/event-stream` body to its final event, handing each piece on. */
export async function readResponsesStream(
  body: AsyncIterable<Uint8Array>,
  onDelta: (delta: ModelDelta) => void,
): Promise<ResponsesAnswer> {
  const assembler = createItemAssembler(onDelta);
  let final: Final | undefined;
  let failure: Error | undefined;
  const parser = createParser({
    onEvent(message) {
      if (final || failure || message.data === "[DONE]") return;
      let event: ResponseStreamEvent;
      try {
        event = JSON.parse(message.data) as ResponseStreamEvent;
      } catch {
        failure = new BrokenStreamError("a streamed event is not JSON");
        return;
      }
      if (event.type === "error") {
        failure = new BrokenStreamError(`the stream ended with an error: ${event.message ?? "an error event"}`);
      } else if (event.type === "response.failed") {
        const error = event.response?.error;
        failure = new BrokenStreamError(
          `the response failed: ${error ? `${error.code}: ${error.message}` : "no reason given"}`,
        );
      } else if (event.type === "response.completed" || event.type === "response.incomplete") {
        final = event.response;
      } else assembler.add(event);
    },
  });
  const decoder = new TextDecoder();
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    if (failure) throw failure;
    if (final) break;
  }
  parser.feed(decoder.decode());
  if (failure) throw failure;
  if (!final) throw new BrokenStreamError("the stream ended before the answer did");
  const output = Array.isArray(final.output) && final.output.length > 0 ? final.output : assembler.output();
  return { ...final, output };
}
