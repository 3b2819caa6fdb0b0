/** The readers of the mapping table (genai-table.ts): each turns a source into a value, or undefined when absent. */
import { OPERATIONS, type Reader } from "./genai-table.js";
import type { JsonValue } from "./otlp-values.js";

export type Attributes = Record<string, JsonValue>;
type JsonObject = { [key: string]: JsonValue };

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A JSON string as its value (else the string itself); other values as they are. */
export function parsedJson(v: JsonValue): JsonValue {
  if (typeof v !== "string") return v;
  const t = v.trim();
  if (!(t.startsWith("{") || t.startsWith("["))) return v;
  try {
    return JSON.parse(t) as JsonValue;
  } catch {
    return v;
  }
}

/** `a.0.b.c` style keys below `prefix` as nested arrays and objects (numeric segments index arrays). */
export function unflatten(attributes: Attributes, prefix: string): JsonValue[] | undefined {
  const root: JsonObject = {};
  const start = `${prefix}.`;
  let found = false;
  for (const [key, value] of Object.entries(attributes)) {
    if (!key.startsWith(start) || !/^\d+\./.test(key.slice(start.length))) continue;
    found = true;
    const path = key.slice(start.length).split(".");
    let node = root;
    for (const segment of path.slice(0, -1)) {
      const next = node[segment];
      node[segment] = isObject(next) ? next : {};
      node = node[segment] as JsonObject;
    }
    node[path[path.length - 1] as string] = value;
  }
  return found ? (arrays(root) as JsonValue[]) : undefined;
}

/** Objects whose keys are all indices become arrays (in index order); OpenInference's wrappers are unwrapped. */
function arrays(v: JsonValue): JsonValue {
  if (!isObject(v)) return v;
  const keys = Object.keys(v);
  if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k)))
    return keys.sort((a, b) => Number(a) - Number(b)).map((k) => unwrap(arrays(v[k] as JsonValue)));
  return Object.fromEntries(keys.map((k) => [k, arrays(v[k] as JsonValue)]));
}

/** OpenInference nests each item under `message`, `tool_call`, `message_content` or `tool`. */
const WRAPPERS = new Set(["message", "tool_call", "message_content", "tool"]);
function unwrap(v: JsonValue): JsonValue {
  if (!isObject(v)) return v;
  const keys = Object.keys(v);
  return keys.length === 1 && WRAPPERS.has(keys[0] as string) ? (v[keys[0] as string] as JsonValue) : v;
}

/** A tool call in any of the shapes the conventions write, as { id, name, arguments }. */
export function toolCallOf(v: JsonValue): JsonValue | undefined {
  if (!isObject(v)) return undefined;
  const fn = isObject(v.function) ? v.function : {};
  const name = v.name ?? fn.name ?? v.toolName;
  if (typeof name !== "string") return undefined;
  const args = v.arguments ?? fn.arguments ?? v.input ?? v.args ?? null;
  return { id: String(v.id ?? v.toolCallId ?? ""), name, arguments: parsedJson(args) };
}

/** The tool calls a model asked for in its output messages (parts of type tool_call, or OpenAI-style tool_calls). */
export function toolCallsOfMessages(messages: JsonValue[]): JsonValue[] {
  const calls: JsonValue[] = [];
  for (const m of messages) {
    if (!isObject(m)) continue;
    const candidates = [
      ...(Array.isArray(m.parts) ? m.parts.filter((p) => isObject(p) && p.type === "tool_call") : []),
      ...(Array.isArray(m.tool_calls) ? m.tool_calls : []),
      ...(isObject(m.message) && Array.isArray(m.message.tool_calls) ? m.message.tool_calls : []),
    ];
    for (const c of candidates) {
      const call = toolCallOf(c);
      if (call) calls.push(call);
    }
  }
  return calls;
}

/** Model families whose provider is plain from the name, for spans that do not say (LangChain under OpenInference). */
const MODEL_PROVIDERS: [RegExp, string][] = [
  [/^(gpt-|o\d|chatgpt-|text-embedding-|davinci|babbage|omni-moderation)/, "openai"],
  [/^claude/, "anthropic"],
  [/^gemini/, "google"],
  [/^(mistral|mixtral|codestral|ministral)/, "mistral"],
];
export function providerOfModel(model: string): string {
  const slash = model.indexOf("/");
  if (slash > 0) return model.slice(0, slash).toLowerCase();
  return MODEL_PROVIDERS.find(([pattern]) => pattern.test(model.toLowerCase()))?.[1] ?? "";
}

/** The finish reasons written on output messages (`finish_reason`, `finishReason`), for conventions that put them there. */
export function finishReasonsOfMessages(messages: JsonValue): string[] {
  if (!Array.isArray(messages)) return [];
  return messages.flatMap((m) => {
    const reason = isObject(m) ? (m.finish_reason ?? m.finishReason) : undefined;
    return typeof reason === "string" && reason !== "" ? [reason] : [];
  });
}

function count(v: JsonValue): number | undefined {
  const n = typeof v === "string" ? Number(v) : v;
  return typeof n === "number" && Number.isInteger(n) && n >= 0 ? n : undefined;
}

function parameters(attributes: Attributes, prefix: string): JsonValue | undefined {
  const start = `${prefix}.`;
  const entries = Object.entries(attributes).filter(([k]) => k.startsWith(start) && k !== `${prefix}.model`);
  return entries.length > 0 ? Object.fromEntries(entries.map(([k, v]) => [k.slice(start.length), v])) : undefined;
}

/** Reads `key` of `attributes` with `reader`; undefined when the source is absent or unreadable. */
export function read(attributes: Attributes, key: string, reader: Reader): JsonValue | undefined {
  if (reader === "indexedMessages") return unflatten(attributes, key);
  if (reader === "parameters") return parameters(attributes, key);
  const v = attributes[key];
  if (v === undefined || v === null || v === "") return undefined;
  switch (reader) {
    case "text":
      return typeof v === "string" ? v : String(v);
    case "count":
      return count(v);
    case "number":
      return typeof v === "number" ? v : undefined;
    case "json":
      return parsedJson(v);
    case "messages": {
      const parsed = parsedJson(v);
      return Array.isArray(parsed) ? parsed : undefined;
    }
    case "textAsAssistant":
      return typeof v === "string" ? [{ role: "assistant", content: v }] : undefined;
    case "strings": {
      const parsed = parsedJson(v);
      const list = Array.isArray(parsed) ? parsed : [parsed];
      return list.filter((s) => typeof s === "string");
    }
    case "provider":
      // The AI SDK writes `openai.chat`, `openai.responses`: the provider is the first segment.
      return typeof v === "string" ? (v.split(".")[0] as string).toLowerCase() : undefined;
    case "operation":
      return typeof v === "string" ? (OPERATIONS[v] ?? v) : undefined;
    case "traceloopTool":
      // OpenLLMetry names every workflow, task and tool span by `traceloop.entity.name`: only a tool's is a tool call.
      return attributes["traceloop.span.kind"] === "tool" && typeof v === "string" ? v : undefined;
    case "toolCalls": {
      const parsed = parsedJson(v);
      return Array.isArray(parsed) ? parsed.flatMap((c) => toolCallOf(c) ?? []) : undefined;
    }
  }
}
