/**
 * A span's attributes and events as a generation or a tool call (docs/observability.md "Mapping"),
 * read through the one table of genai-table.ts. Attributes are only read: the span keeps every one
 * of them as it came.
 */
import { encodeJson } from "@kiln/kit/store";
import { estimateCostUsd, type ModelCatalog } from "@kiln/models/catalog";
import type { TokenUsage } from "@kiln/models/provider";
import {
  type Attributes,
  finishReasonsOfMessages,
  providerOfModel,
  read,
  toolCallsOfMessages,
} from "./genai-readers.js";
import {
  AGGREGATE_OPERATIONS,
  DETAILS_EVENT,
  GENERATION_TABLE,
  MESSAGE_EVENTS,
  MODEL_OPERATIONS,
  type Source,
  TOOL_CALL_TABLE,
  TRACE_TABLE,
} from "./genai-table.js";
import type { JsonValue } from "./otlp-values.js";

export interface GenerationDoc {
  operation: string;
  requestModel: string;
  responseModel: string;
  provider: string;
  inputTokens: number | null;
  outputTokens: number | null;
  cacheReadInputTokens?: number | null;
  cacheCreationInputTokens?: number | null;
  reasoningTokens?: number | null;
  /** null when the model is not in the price table, or the usage is not known (never 0 for unknown). */
  costUsd: number | null;
  /** JSON text of the messages (an array), null when the span carried none. */
  inputMessages: string | null;
  outputMessages: string | null;
  /** JSON text, null when absent: the system instructions, the tool calls the model asked for ({ id, name, arguments }), the tools offered, the request parameters. */
  systemInstructions?: string | null;
  toolCalls?: string | null;
  toolDefinitions?: string | null;
  parameters?: string | null;
  responseId?: string;
  finishReasons?: string[];
  errorType?: string;
  timeToFirstChunkMs?: number | null;
}

/** A tool execution span's call; arguments and result are JSON text. */
export interface ToolCallDoc {
  id: string;
  name: string;
  type: string;
  arguments: string | null;
  result: string | null;
}

export interface SpanEvent {
  name: string;
  /** ISO 8601. */
  time: string;
  attributes: Attributes;
}

const first = (attributes: Attributes, sources: readonly Source[]): JsonValue | undefined => {
  for (const s of sources) {
    const v = read(attributes, s.key, s.read);
    if (v !== undefined) return v;
  }
  return undefined;
};
const text = (v: JsonValue | undefined): string => (typeof v === "string" ? v : "");
const count = (v: JsonValue | undefined): number | null => (typeof v === "number" ? v : null);
const jsonText = (v: JsonValue | undefined): string | null => (v === undefined ? null : encodeJson(v));

/** The older event-based messages: `gen_ai.user.message`, ..., `gen_ai.choice`, each event one message. */
function eventMessages(
  events: readonly Pick<SpanEvent, "name" | "attributes">[],
  side: "input" | "output",
): JsonValue[] | undefined {
  const messages: JsonValue[] = [];
  for (const e of events) {
    const kind = MESSAGE_EVENTS[e.name];
    if (kind?.side !== side) continue;
    const { "gen_ai.system": _system, ...fields } = e.attributes;
    messages.push({ role: kind.role, ...fields });
  }
  return messages.length > 0 ? messages : undefined;
}

/** The span's attributes, under them those of a `gen_ai.client.inference.operation.details` event. */
function withDetails(attributes: Attributes, events: readonly Pick<SpanEvent, "name" | "attributes">[]): Attributes {
  const details = events.find((e) => e.name === DETAILS_EVENT);
  return details ? { ...details.attributes, ...attributes } : attributes;
}

const DETECTING = [...GENERATION_TABLE.requestModel.slice(0, 3), ...GENERATION_TABLE.responseModel.slice(0, 1)];

/**
 * A span's token counts as TokenUsage, for the same estimateCostUsd that prices runs. The GenAI
 * conventions count cache reads and writes inside the input tokens and reasoning inside the output
 * tokens; an instrumentation that passes a provider's own counts on (Anthropic's input_tokens
 * without the cache, Gemini's candidates without the thoughts) reports parts larger than their
 * whole, and then the whole is taken to exclude them (docs/observability.md "Mapping").
 */
export function usageOfCounts(
  input: number,
  output: number,
  cacheRead: number | null,
  cacheWrite: number | null,
  reasoning: number | null,
): TokenUsage {
  const cached = cacheRead ?? 0;
  const written = cacheWrite ?? 0;
  const thought = reasoning ?? 0;
  return {
    inputTokens: cached + written > input ? input + cached + written : input,
    outputTokens: thought > output ? output + thought : output,
    ...(cacheRead !== null ? { cachedInputTokens: cacheRead } : {}),
    ...(cacheWrite !== null ? { cacheWriteInputTokens: cacheWrite } : {}),
    ...(reasoning !== null ? { reasoningTokens: reasoning } : {}),
  };
}

/** null when the span is not a model call. */
export function generationOf(
  spanAttributes: Attributes,
  events: readonly Pick<SpanEvent, "name" | "attributes">[],
  models: ModelCatalog,
): GenerationDoc | null {
  const attributes = withDetails(spanAttributes, events);
  const field = (name: keyof typeof GENERATION_TABLE) => first(attributes, GENERATION_TABLE[name]);
  const operation = text(field("operation"));
  if (AGGREGATE_OPERATIONS.has(operation)) return null;
  if (first(attributes, DETECTING) === undefined && !MODEL_OPERATIONS.has(operation)) return null;
  const requestModel = text(field("requestModel"));
  const responseModel = text(field("responseModel"));
  // Unsaid (LangChain under OpenInference), the provider is the model's, so the call is still priced.
  const provider = text(field("provider")) || providerOfModel(responseModel || requestModel);
  const inputTokens = count(field("inputTokens"));
  const outputTokens = count(field("outputTokens"));
  const cacheReadInputTokens = count(field("cacheReadInputTokens"));
  const cacheCreationInputTokens = count(field("cacheCreationInputTokens"));
  const reasoningTokens = count(field("reasoningTokens"));
  // The model that answered, else the one asked for; priced only when Kiln's table knows it.
  const entry = [responseModel, requestModel]
    .filter((m) => m !== "")
    .map((m) => models.get(`${provider}/${m}`))
    .find((m) => m !== undefined);
  const costUsd =
    entry && inputTokens !== null && outputTokens !== null
      ? estimateCostUsd(
          entry.pricing,
          usageOfCounts(inputTokens, outputTokens, cacheReadInputTokens, cacheCreationInputTokens, reasoningTokens),
        )
      : null;
  const inputMessages = field("inputMessages") ?? eventMessages(events, "input");
  const outputMessages = field("outputMessages") ?? eventMessages(events, "output");
  const asked = Array.isArray(outputMessages) ? toolCallsOfMessages(outputMessages) : [];
  const toolCalls = field("toolCalls") ?? (asked.length > 0 ? asked : undefined);
  const finishReasons = field("finishReasons") ?? finishReasonsOfMessages(outputMessages ?? []);
  return {
    operation,
    requestModel,
    responseModel,
    provider,
    inputTokens,
    outputTokens,
    cacheReadInputTokens,
    cacheCreationInputTokens,
    reasoningTokens,
    costUsd,
    inputMessages: jsonText(inputMessages),
    outputMessages: jsonText(outputMessages),
    systemInstructions: jsonText(field("systemInstructions")),
    toolCalls: jsonText(toolCalls),
    toolDefinitions: jsonText(field("toolDefinitions")),
    parameters: jsonText(field("parameters")),
    responseId: text(field("responseId")),
    finishReasons: Array.isArray(finishReasons) ? finishReasons.filter((r) => typeof r === "string") : [],
    errorType: text(field("errorType")),
    timeToFirstChunkMs: count(field("timeToFirstChunkMs")),
  };
}

/** null when the span is not a tool execution. */
export function toolCallOfSpan(attributes: Attributes): ToolCallDoc | null {
  const name = text(first(attributes, TOOL_CALL_TABLE.name));
  if (name === "") return null;
  return {
    id: text(first(attributes, TOOL_CALL_TABLE.id)),
    name,
    type: text(first(attributes, TOOL_CALL_TABLE.type)),
    arguments: jsonText(first(attributes, TOOL_CALL_TABLE.arguments)),
    result: jsonText(first(attributes, TOOL_CALL_TABLE.result)),
  };
}

/** The session a span belongs to and the end user it served ("" when it does not say). */
export const sessionOf = (attributes: Attributes): string => text(first(attributes, TRACE_TABLE.sessionId));
export const userOf = (attributes: Attributes): string => text(first(attributes, TRACE_TABLE.userId));
