/**
 * A span's GenAI semantic-convention attributes as a generation (docs/observability.md "Mapping"):
 * the current `gen_ai.*` attributes, and the older `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`
 * and `gen_ai.usage.prompt_tokens` / `completion_tokens`. Attributes are only read: the span keeps
 * every one of them as it came.
 */
import { encodeJson } from "@kiln/kit/store";
import { estimateCostUsd, type ModelCatalog } from "../domain/model-catalog.js";
import type { JsonValue } from "./otlp-values.js";

export interface GenerationDoc {
  operation: string;
  requestModel: string;
  responseModel: string;
  provider: string;
  inputTokens: number | null;
  outputTokens: number | null;
  /** null when the model is not in the price table, or the usage is not known (never 0 for unknown). */
  costUsd: number | null;
  /** JSON text of the messages (an array), null when the span carried none. */
  inputMessages: string | null;
  outputMessages: string | null;
}

type Attributes = Record<string, JsonValue>;

const text = (v: JsonValue | undefined): string => (typeof v === "string" ? v : "");

function count(v: JsonValue | undefined): number | null {
  const n = typeof v === "string" ? Number(v) : v;
  return typeof n === "number" && Number.isInteger(n) && n >= 0 ? n : null;
}

/** `gen_ai.input.messages` is a JSON string (or, from some SDKs, an array already). */
function messagesOf(v: JsonValue | undefined): JsonValue[] | null {
  if (Array.isArray(v)) return v;
  if (typeof v !== "string") return null;
  try {
    const parsed: unknown = JSON.parse(v);
    return Array.isArray(parsed) ? (parsed as JsonValue[]) : null;
  } catch {
    return null;
  }
}

/** `gen_ai.prompt.0.role`, `gen_ai.prompt.0.content`, ... as [{ role, content, ... }] in index order. */
function indexedMessages(attributes: Attributes, prefix: string): JsonValue[] | null {
  const byIndex = new Map<number, Record<string, JsonValue>>();
  const pattern = new RegExp(`^${prefix.replaceAll(".", "\\.")}\\.(\\d+)\\.(.+)$`);
  for (const [key, value] of Object.entries(attributes)) {
    const m = pattern.exec(key);
    if (!m) continue;
    const index = Number(m[1]);
    const message = byIndex.get(index) ?? {};
    message[m[2] as string] = value;
    byIndex.set(index, message);
  }
  if (byIndex.size === 0) return null;
  return [...byIndex.entries()].sort(([a], [b]) => a - b).map(([, m]) => m);
}

const encoded = (messages: JsonValue[] | null) => (messages === null ? null : encodeJson(messages));

const OPERATIONS_OF_MODELS = new Set(["chat", "text_completion", "generate_content", "embeddings"]);

/** null when the span is not a model call. */
export function generationOf(attributes: Attributes, models: ModelCatalog): GenerationDoc | null {
  const operation = text(attributes["gen_ai.operation.name"]);
  const requestModel = text(attributes["gen_ai.request.model"]);
  const responseModel = text(attributes["gen_ai.response.model"]);
  if (!requestModel && !responseModel && !OPERATIONS_OF_MODELS.has(operation)) return null;
  const provider = text(attributes["gen_ai.provider.name"]) || text(attributes["gen_ai.system"]);
  const inputTokens = count(attributes["gen_ai.usage.input_tokens"] ?? attributes["gen_ai.usage.prompt_tokens"]);
  const outputTokens = count(attributes["gen_ai.usage.output_tokens"] ?? attributes["gen_ai.usage.completion_tokens"]);
  // The model that answered, else the one asked for; priced only when Kiln's table knows it.
  const entry = [responseModel, requestModel]
    .filter((m) => m !== "")
    .map((m) => models.get(`${provider}/${m}`))
    .find((m) => m !== undefined);
  const costUsd =
    entry && inputTokens !== null && outputTokens !== null
      ? estimateCostUsd(entry.pricing, { inputTokens, outputTokens })
      : null;
  return {
    operation,
    requestModel,
    responseModel,
    provider,
    inputTokens,
    outputTokens,
    costUsd,
    inputMessages: encoded(
      messagesOf(attributes["gen_ai.input.messages"]) ?? indexedMessages(attributes, "gen_ai.prompt"),
    ),
    outputMessages: encoded(
      messagesOf(attributes["gen_ai.output.messages"]) ?? indexedMessages(attributes, "gen_ai.completion"),
    ),
  };
}

/** The session a span belongs to: `session.id`, else `gen_ai.conversation.id`. */
export const sessionOf = (attributes: Attributes): string =>
  text(attributes["session.id"]) || text(attributes["gen_ai.conversation.id"]);
