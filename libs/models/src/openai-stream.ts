/**
 * A streamed Chat Completions answer (`stream: true`): the server-sent events parsed with
 * eventsource-parser, each content and tool-call piece handed on as it arrives, and the chunks
 * assembled into the `ChatCompletion` the non-streaming call would have answered (text, refusal,
 * tool calls by index, finish reason, and the usage of the last chunk that
 * `stream_options.include_usage` asks for), so the turn is read by the same `toResult`.
 */
import { createParser } from "eventsource-parser";
import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions";
import type { ModelDelta } from "./provider.js";
import { BrokenStreamError } from "./remote-call.js";

interface AssembledCall {
  id: string;
  name: string;
  arguments: string;
}

/** The chunks of one streamed turn, put together. */
export function createChunkAssembler(onDelta: (delta: ModelDelta) => void) {
  let id = "";
  let model = "";
  let created = 0;
  let content = "";
  let refusal = "";
  let finishReason: string | null = null;
  let usage: ChatCompletion["usage"];
  const calls = new Map<number, AssembledCall>();

  return {
    add(chunk: ChatCompletionChunk): void {
      id ||= chunk.id ?? "";
      model ||= chunk.model ?? "";
      created ||= chunk.created ?? 0;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
      if (!choice) return;
      const delta = choice.delta ?? {};
      if (typeof delta.content === "string" && delta.content !== "") {
        content += delta.content;
        onDelta({ type: "text", text: delta.content });
      }
      if (typeof delta.refusal === "string") refusal += delta.refusal;
      for (const piece of delta.tool_calls ?? []) {
        const index = piece.index ?? 0;
        let call = calls.get(index);
        if (!call) {
          call = { id: "", name: "", arguments: "" };
          calls.set(index, call);
        }
        if (piece.id) call.id = piece.id;
        if (piece.function?.name) call.name += piece.function.name;
        const args = piece.function?.arguments ?? "";
        call.arguments += args;
        onDelta({
          type: "tool_call",
          index,
          ...(piece.id ? { id: piece.id } : {}),
          ...(piece.function?.name ? { name: piece.function.name } : {}),
          arguments: args,
        });
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    },

    /** The turn as a non-streaming answer. */
    completion(): ChatCompletion {
      const toolCalls = [...calls.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, c]) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } }));
      return {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: content === "" && (toolCalls.length > 0 || refusal !== "") ? null : content,
              refusal: refusal === "" ? null : refusal,
              ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            },
            logprobs: null,
            finish_reason: (finishReason ?? "stop") as ChatCompletion.Choice["finish_reason"],
          },
        ],
        ...(usage ? { usage } : {}),
      };
    },
  };
}

/**
 * Reads a `text/event-stream` body to its end (or its `data: [DONE]`), handing each piece on.
 * An `error` event, a chunk that is not JSON, or a stream that ends without a finish reason
 * rejects with BrokenStreamError; a read that fails (the connection dropped, the call aborted)
 * rejects with that failure.
 */
export async function readChatStream(
  body: AsyncIterable<Uint8Array>,
  onDelta: (delta: ModelDelta) => void,
): Promise<ChatCompletion> {
  const assembler = createChunkAssembler(onDelta);
  let done = false;
  let finished = false;
  let failure: Error | undefined;
  const parser = createParser({
    onEvent(event) {
      if (done || failure) return;
      if (event.data === "[DONE]") {
        done = true;
        return;
      }
      let chunk: ChatCompletionChunk & { error?: { message?: unknown } };
      try {
        chunk = JSON.parse(event.data) as typeof chunk;
      } catch {
        failure = new BrokenStreamError("a streamed chunk is not JSON");
        return;
      }
      if (event.event === "error" || chunk.error) {
        const message = typeof chunk.error?.message === "string" ? chunk.error.message : "an error event";
        failure = new BrokenStreamError(`the stream ended with an error: ${message}`);
        return;
      }
      if (chunk.choices?.some((c) => c.finish_reason)) finished = true;
      assembler.add(chunk);
    },
  });
  const decoder = new TextDecoder();
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    if (failure) throw failure;
    if (done) break;
  }
  parser.feed(decoder.decode());
  if (failure) throw failure;
  if (!finished) throw new BrokenStreamError("the stream ended before the answer did");
  return assembler.completion();
}
