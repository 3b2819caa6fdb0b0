/**
 * `local/echo`: the built-in deterministic model, so every flow runs offline (api.md "Identity").
 * - The request offers tools and the conversation holds no tool result yet: it calls each offered
 *   tool once (none for tool choice "none", only the named one for a named choice), with an input
 *   made up from the tool's input schema (same-named variables where they fit, other strings the
 *   rendered text).
 * - Otherwise it answers with the rendered text: the system, developer and user contents joined by
 *   a blank line, then the tool results; for a json_schema response format, an instance of the
 *   schema whose strings hold that text (see schema-instance.ts); for json_object, `{"text": …}`.
 * Usage counts whitespace-separated words: input = every message's content (and the JSON of the
 * tool calls assistant messages carry), output = the answer text or the tool inputs' JSON.
 * No randomness and no clock: equal requests give equal results. Streaming (`onDelta`), the text
 * comes in up to four pieces and each tool call in one.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import {
  abortedCallError,
  type ChatMessage,
  type ModelDelta,
  type ModelProvider,
  type ModelRequest,
  type ModelResult,
  ProviderError,
} from "./provider.js";
import { buildSchemaInstance } from "./schema-instance.js";

export const LOCAL_PROVIDER_ID = "local";
export const ECHO_MODEL = "echo";

export function createLocalEchoProvider(): ModelProvider {
  return {
    id: LOCAL_PROVIDER_ID,
    async generate(request) {
      if (request.signal?.aborted)
        throw abortedCallError(request.signal, { provider: LOCAL_PROVIDER_ID, model: request.model });
      if (request.model !== ECHO_MODEL) {
        throw new ProviderError("provider_error", `the local provider has no model "${request.model}"`, {
          provider: LOCAL_PROVIDER_ID,
          model: request.model,
        });
      }
      let result: ModelResult;
      try {
        result = answer(request);
      } catch (error) {
        // Only a schema that admits no instance (or recurses without end) gets here.
        const reason = error instanceof Error ? error.message : "unusable schema";
        throw new ProviderError("provider_error", `local/echo could not answer: ${reason}`, {
          provider: LOCAL_PROVIDER_ID,
          model: ECHO_MODEL,
          cause: error,
        });
      }
      if (request.onDelta) await streamAnswer(result, request.onDelta, request.signal);
      return result;
    },
  };
}

/** How many pieces local/echo streams an answer text in. */
const STREAM_PIECES = 4;

/**
 * A streaming call: the answer text in up to four pieces, then each tool call in one delta, a turn
 * of the event loop apart (so they leave as separate messages).
 */
async function streamAnswer(result: ModelResult, onDelta: (delta: ModelDelta) => void, signal?: AbortSignal) {
  // Split by code points: a piece never ends inside a surrogate pair.
  const chars = Array.from(result.text);
  const size = Math.max(1, Math.ceil(chars.length / STREAM_PIECES));
  for (let at = 0; at < chars.length; at += size) {
    const text = chars.slice(at, at + size).join("");
    await nextTurn();
    if (signal?.aborted) throw abortedCallError(signal, { provider: LOCAL_PROVIDER_ID, model: ECHO_MODEL });
    onDelta({ type: "text", text });
  }
  for (const [index, call] of result.toolCalls.entries()) {
    await nextTurn();
    onDelta({ type: "tool_call", index, id: call.id, name: call.name, arguments: JSON.stringify(call.input ?? {}) });
  }
}

function answer(request: ModelRequest): ModelResult {
  const { messages } = request;
  const text = renderText(messages);
  const base = { provider: LOCAL_PROVIDER_ID, model: ECHO_MODEL, retries: 0 };
  const inputTokens = countInputWords(messages);
  const choice = request.toolChoice;
  const offered = choice === "none" ? [] : (request.tools ?? []);
  const tools = typeof choice === "object" ? offered.filter((t) => t.name === choice.name) : offered;

  if (tools.length > 0 && !messages.some((m) => m.role === "tool")) {
    const toolCalls = tools.map((tool, i) => ({
      id: `call_echo_${i + 1}`,
      name: tool.name,
      input: buildSchemaInstance(tool.inputSchema, { text, topLevelValues: request.variables }),
    }));
    const outputTokens = toolCalls.reduce((n, c) => n + countWords(JSON.stringify(c.input)), 0);
    return { ...base, text: "", toolCalls, usage: { inputTokens, outputTokens }, finishReason: "tool_calls" };
  }

  if (request.responseFormat?.type === "json_schema") {
    const json = buildSchemaInstance(request.responseFormat.schema, { text });
    const serialized = JSON.stringify(json);
    return {
      ...base,
      text: serialized,
      json,
      toolCalls: [],
      usage: { inputTokens, outputTokens: countWords(serialized) },
      finishReason: "stop",
    };
  }
  if (request.responseFormat?.type === "json_object") {
    const serialized = JSON.stringify({ text });
    return {
      ...base,
      text: serialized,
      json: { text },
      toolCalls: [],
      usage: { inputTokens, outputTokens: countWords(serialized) },
      finishReason: "stop",
    };
  }
  return { ...base, text, toolCalls: [], usage: { inputTokens, outputTokens: countWords(text) }, finishReason: "stop" };
}

/** System, developer and user contents in order, then the tool results, joined by blank lines. */
export function renderText(messages: ChatMessage[]): string {
  const prompt = messages.filter((m) => m.role === "system" || m.role === "developer" || m.role === "user");
  const results = messages.filter((m) => m.role === "tool");
  return [...prompt, ...results]
    .map((m) => m.content)
    .filter((c) => c !== "")
    .join("\n\n");
}

function countInputWords(messages: ChatMessage[]): number {
  let words = 0;
  for (const m of messages) {
    words += countWords(m.content);
    if (m.role === "assistant")
      for (const call of m.toolCalls ?? []) words += countWords(JSON.stringify(call.input) ?? "");
  }
  return words;
}

/** Whitespace-separated words: local/echo's token count. */
export function countWords(text: string): number {
  let count = 0;
  for (const part of text.split(/\s+/)) if (part !== "") count++;
  return count;
}
