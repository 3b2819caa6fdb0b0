/**
 * A streamed Messages answer (`stream: true`): the server-sent events Anthropic sends
 * (`message_start`, then per content block `content_block_start`, its `content_block_delta`s and
 * `content_block_stop`, then `message_delta` with the stop reason and the final usage, and
 * `message_stop`; `ping`s anywhere; an `error` event when the API fails mid-stream), parsed with
 * eventsource-parser. Text and tool-call pieces are handed on as they arrive; the events are put
 * together into the `Message` the non-streaming call would have answered, so the turn is read by
 * the same `toResult` (anthropic-wire.ts). Thinking is assembled (its text and its signature) but
 * never handed on as text.
 */
import type { ContentBlock, Message, RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import { createParser } from "eventsource-parser";
import type { ModelDelta } from "./provider.js";
import { BrokenStreamError } from "./remote-call.js";

type Loose = Record<string, unknown>;

/** One content block as it arrives; a tool call's input is its JSON text until the block stops. */
interface OpenBlock {
  block: ContentBlock;
  json: string;
  /** The tool call's index among the turn's tool calls (what `onDelta` calls it), or -1. */
  callIndex: number;
}

/** The events of one streamed turn, put together. */
export function createEventAssembler(onDelta: (delta: ModelDelta) => void) {
  let message: Message | undefined;
  const blocks = new Map<number, OpenBlock>();
  let calls = 0;
  let stopped = false;

  const open = (index: number): OpenBlock => {
    const found = blocks.get(index);
    if (!found) throw new BrokenStreamError(`a delta for content block ${index}, which had not started`);
    return found;
  };

  return {
    get stopped() {
      return stopped;
    },

    add(event: RawMessageStreamEvent): void {
      switch (event.type) {
        case "message_start":
          message = { ...event.message, content: [] };
          return;
        case "content_block_start": {
          const block = { ...event.content_block } as ContentBlock;
          let callIndex = -1;
          if (block.type === "tool_use") {
            callIndex = calls++;
            onDelta({ type: "tool_call", index: callIndex, id: block.id, name: block.name, arguments: "" });
          }
          blocks.set(event.index, { block, json: "", callIndex });
          return;
        }
        case "content_block_delta": {
          const target = open(event.index);
          const { block } = target;
          const delta = event.delta;
          if (delta.type === "text_delta" && block.type === "text") {
            block.text += delta.text;
            if (delta.text !== "") onDelta({ type: "text", text: delta.text });
          } else if (delta.type === "input_json_delta") {
            target.json += delta.partial_json;
            if (delta.partial_json !== "" && target.callIndex >= 0) {
              onDelta({ type: "tool_call", index: target.callIndex, arguments: delta.partial_json });
            }
          } else if (delta.type === "thinking_delta" && block.type === "thinking") block.thinking += delta.thinking;
          else if (delta.type === "signature_delta" && block.type === "thinking") block.signature += delta.signature;
          return;
        }
        case "content_block_stop": {
          const { block, json } = open(event.index);
          if (block.type === "tool_use") {
            try {
              block.input = json.trim() === "" ? {} : JSON.parse(json);
            } catch {
              throw new BrokenStreamError(`tool "${block.name}" was called with arguments that are not JSON`);
            }
          }
          return;
        }
        case "message_delta":
          if (!message) throw new BrokenStreamError("a message_delta before message_start");
          message.stop_reason = event.delta.stop_reason;
          message.stop_sequence = event.delta.stop_sequence;
          // The delta's counts are cumulative: each one it reports replaces the start's.
          for (const [key, value] of Object.entries(event.usage ?? {})) {
            if (value !== null && value !== undefined) (message.usage as unknown as Loose)[key] = value;
          }
          return;
        case "message_stop":
          stopped = true;
          return;
      }
    },

    /** The turn as a non-streaming answer. */
    message(): Message {
      if (!message) throw new BrokenStreamError("the stream had no message_start");
      const content = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, b]) => b.block);
      return { ...message, content };
    },
  };
}

/**
 * Reads a `text/event-stream` body to its `message_stop`, handing each piece on. An `error`
 * event, an event that is not JSON, or a stream that ends before `message_stop` rejects with
 * BrokenStreamError; a read that fails (the connection dropped, the call aborted) rejects with
 * that failure.
 */
export async function readMessageStream(
  body: AsyncIterable<Uint8Array>,
  onDelta: (delta: ModelDelta) => void,
): Promise<Message> {
  const assembler = createEventAssembler(onDelta);
  let failure: Error | undefined;
  const parser = createParser({
    onEvent(event) {
      if (failure || assembler.stopped) return;
      let data: Loose;
      try {
        data = JSON.parse(event.data) as Loose;
      } catch {
        failure = new BrokenStreamError("a streamed event is not JSON");
        return;
      }
      const type = data.type ?? event.event;
      if (type === "ping") return;
      if (type === "error") {
        const error = (data.error ?? {}) as Loose;
        const what = [error.type, error.message].filter((v) => typeof v === "string").join(": ");
        failure = new BrokenStreamError(`the stream ended with an error: ${what || "an error event"}`);
        return;
      }
      try {
        assembler.add(data as unknown as RawMessageStreamEvent);
      } catch (e) {
        failure = e instanceof BrokenStreamError ? e : new BrokenStreamError("a streamed event could not be read");
      }
    },
  });
  const decoder = new TextDecoder();
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    if (failure) throw failure;
    if (assembler.stopped) break;
  }
  parser.feed(decoder.decode());
  if (failure) throw failure;
  if (!assembler.stopped) throw new BrokenStreamError("the stream ended before the answer did");
  return assembler.message();
}
