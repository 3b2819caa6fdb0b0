/**
 * A streamed Gemini answer (`:streamGenerateContent?alt=sse`): server-sent events, each one a
 * whole GenerateContentResponse with the next parts of the candidate (text pieces, whole function
 * calls), the finish reason in the last and the usage counts so far in each. The pieces are handed
 * on as they arrive and the events assembled into the one response the non-streaming call would
 * have answered, read by the same `toGeminiResult`.
 */
import type { Part } from "@google/genai";
import { createParser } from "eventsource-parser";
import { assignCallIds, type GeminiResponse } from "./gemini-result.js";
import type { ModelDelta } from "./provider.js";
import { BrokenStreamError } from "./remote-call.js";

/**
 * Reads the event stream to its end. An event that is not JSON or carries an `error`, or a stream
 * that ends before a finish reason (or a blocked prompt), rejects with BrokenStreamError; a read
 * that fails (connection dropped, call aborted) rejects with that failure.
 */
export async function readGeminiStream(
  body: AsyncIterable<Uint8Array>,
  onDelta: (delta: ModelDelta) => void,
  remember: (id: string, signature: string) => void,
): Promise<GeminiResponse> {
  const parts: Part[] = [];
  const assembled: GeminiResponse = {};
  let finishReason: string | undefined;
  let calls = 0;
  let failure: Error | undefined;
  const add = (chunk: GeminiResponse) => {
    assignCallIds(chunk, remember);
    assembled.responseId ??= chunk.responseId;
    assembled.modelVersion ??= chunk.modelVersion;
    if (chunk.usageMetadata) assembled.usageMetadata = chunk.usageMetadata;
    if (chunk.promptFeedback) assembled.promptFeedback = chunk.promptFeedback;
    const candidate = chunk.candidates?.[0];
    if (candidate?.finishReason) finishReason = candidate.finishReason;
    for (const part of candidate?.content?.parts ?? []) {
      parts.push(part);
      if (typeof part.text === "string" && part.text !== "" && !part.thought)
        onDelta({ type: "text", text: part.text });
      const call = part.functionCall;
      if (call) {
        onDelta({
          type: "tool_call",
          index: calls++,
          id: call.id,
          name: call.name,
          arguments: JSON.stringify(call.args ?? {}),
        });
      }
    }
  };
  const parser = createParser({
    onEvent(event) {
      if (failure) return;
      let chunk: GeminiResponse & { error?: { message?: unknown } };
      try {
        chunk = JSON.parse(event.data) as typeof chunk;
      } catch {
        failure = new BrokenStreamError("a streamed chunk is not JSON");
        return;
      }
      if (chunk.error) {
        const message = typeof chunk.error.message === "string" ? chunk.error.message : "an error event";
        failure = new BrokenStreamError(`the stream ended with an error: ${message}`);
        return;
      }
      add(chunk);
    },
  });
  const decoder = new TextDecoder();
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    if (failure) throw failure;
  }
  parser.feed(decoder.decode());
  if (failure) throw failure;
  if (finishReason === undefined && !assembled.promptFeedback?.blockReason) {
    throw new BrokenStreamError("the stream ended before the answer did");
  }
  return {
    ...assembled,
    candidates:
      finishReason === undefined
        ? []
        : [{ content: { role: "model", parts: mergeText(parts) }, finishReason: finishReason as never }],
  };
}

/** Adjacent text pieces as one part (as the whole answer would have them). */
function mergeText(parts: Part[]): Part[] {
  const out: Part[] = [];
  for (const part of parts) {
    const last = out.at(-1);
    const plain = (p: Part) => typeof p.text === "string" && Object.keys(p).length === 1;
    if (last && plain(last) && plain(part)) last.text = `${last.text}${part.text}`;
    else out.push({ ...part });
  }
  return out;
}
