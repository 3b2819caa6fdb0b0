/**
 * The Anthropic stub's streamed answers (`stream: true`): the server-sent events of Anthropic's
 * Messages streaming, in its order: `message_start` (the message without content, the input
 * usage), a `ping`, then per content block `content_block_start`, its deltas (`thinking_delta`s
 * then one `signature_delta` for thinking, `text_delta`s word by word, `input_json_delta`s for a
 * tool call's input in two halves) and `content_block_stop`, then `message_delta` (stop reason,
 * cumulative usage) and `message_stop`. Each event is `event: <type>` plus its JSON `data`, the
 * SDK's `RawMessageStreamEvent`. Deltas are `chunkDelayMs` apart; a stream can break off or end
 * with an `error` event.
 */
import type { ServerResponse } from "node:http";
import type { ContentBlock, Message, RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import type { ErrorType } from "@anthropic-ai/sdk/resources/shared";

export interface AnthropicStreamRecord {
  /** Stub clock (ms since it started) when the first delta was written, and when the stream ended. */
  firstDeltaAtMs: number;
  lastEventAtMs: number;
  /** Deltas written. */
  deltas: number;
  /** The client went away before the end. */
  closedEarly: boolean;
  /** The stub broke the connection off on purpose (`breakAfterDeltas`). */
  broken: boolean;
}

export interface StreamedMessage {
  message: Message;
  chunkDelayMs: number;
  breakAfterDeltas?: number;
  errorAfterDeltas?: { deltas: number; type: ErrorType; message: string };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A block as `content_block_start` opens it, and the deltas that fill it. */
function eventsOf(
  block: ContentBlock,
  index: number,
): { start: RawMessageStreamEvent; deltas: RawMessageStreamEvent[] } {
  const delta = (d: Extract<RawMessageStreamEvent, { type: "content_block_delta" }>["delta"]) =>
    ({ type: "content_block_delta", index, delta: d }) as RawMessageStreamEvent;
  switch (block.type) {
    case "text":
      return {
        start: { type: "content_block_start", index, content_block: { ...block, text: "" } },
        deltas: (block.text.match(/\S+\s*|\s+/g) ?? []).map((text) => delta({ type: "text_delta", text })),
      };
    case "thinking":
      return {
        start: { type: "content_block_start", index, content_block: { ...block, thinking: "", signature: "" } },
        deltas: [
          ...(block.thinking.match(/\S+\s*|\s+/g) ?? []).map((thinking) => delta({ type: "thinking_delta", thinking })),
          delta({ type: "signature_delta", signature: block.signature }),
        ],
      };
    case "tool_use": {
      const json = JSON.stringify(block.input ?? {});
      const half = Math.ceil(json.length / 2);
      return {
        start: { type: "content_block_start", index, content_block: { ...block, input: {} } },
        deltas: [
          delta({ type: "input_json_delta", partial_json: "" }),
          delta({ type: "input_json_delta", partial_json: json.slice(0, half) }),
          delta({ type: "input_json_delta", partial_json: json.slice(half) }),
        ],
      };
    }
    default:
      return { start: { type: "content_block_start", index, content_block: block }, deltas: [] };
  }
}

/** Writes a message as Anthropic's event stream; resolves with its record when done (or cut short). */
export async function streamMessage(
  res: ServerResponse,
  s: StreamedMessage,
  now: () => number,
): Promise<AnthropicStreamRecord> {
  const record: AnthropicStreamRecord = {
    firstDeltaAtMs: -1,
    lastEventAtMs: -1,
    deltas: 0,
    closedEarly: false,
    broken: false,
  };
  const write = (event: RawMessageStreamEvent | { type: "ping" } | { type: "error"; error: unknown }) => {
    res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  };
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    "request-id": "req_stub_stream",
  });
  res.flushHeaders();
  const { message } = s;
  const { usage } = message;
  write({
    type: "message_start",
    message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
  });
  write({ type: "ping" });
  for (const [index, block] of message.content.entries()) {
    const { start, deltas } = eventsOf(block, index);
    write(start);
    for (const event of deltas) {
      if (s.chunkDelayMs > 0) await sleep(s.chunkDelayMs);
      if (res.destroyed) {
        record.closedEarly = true;
        record.lastEventAtMs = now();
        return record;
      }
      if (s.breakAfterDeltas !== undefined && record.deltas >= s.breakAfterDeltas) {
        record.broken = true;
        record.lastEventAtMs = now();
        res.destroy();
        return record;
      }
      if (s.errorAfterDeltas && record.deltas >= s.errorAfterDeltas.deltas) {
        write({ type: "error", error: { type: s.errorAfterDeltas.type, message: s.errorAfterDeltas.message } });
        res.end();
        record.lastEventAtMs = now();
        return record;
      }
      write(event);
      if (record.deltas++ === 0) record.firstDeltaAtMs = now();
    }
    write({ type: "content_block_stop", index });
  }
  write({
    type: "message_delta",
    delta: {
      stop_reason: message.stop_reason,
      stop_sequence: message.stop_sequence,
      container: null,
      stop_details: null,
    },
    usage: {
      input_tokens: usage.input_tokens,
      output_tokens: usage.output_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      output_tokens_details: usage.output_tokens_details,
      server_tool_use: null,
    },
  });
  write({ type: "message_stop" });
  res.end();
  record.lastEventAtMs = now();
  return record;
}
