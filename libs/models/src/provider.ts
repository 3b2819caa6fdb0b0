/**
 * The model provider interface of the execution service: one call = one model turn, whose answer
 * may stream (`onDelta`) while the call still resolves to the whole turn. The run executor
 * renders the prompt version into messages, resolves the model through the registry
 * (provider-registry.ts) and calls `generate`; it runs tools itself and calls again with the tool
 * results appended. Providers never see organizations, runs or prices.
 */
import { DomainError } from "@kiln/kit/errors";

/** A JSON Schema object (draft 2020-12 or 07 as written by users: tool inputs, response formats). */
export type JsonSchema = Record<string, unknown>;

/** A tool call the model made. `name` is the tool's toolKey; `input` is the parsed JSON arguments. */
export interface ToolCall {
  /** Opaque, unique within the conversation; a tool result answers it by `toolCallId`. */
  id: string;
  name: string;
  input: unknown;
}

/**
 * One message of the conversation, already rendered (variables substituted). Roles as in Chat
 * Completions: an assistant turn that called tools carries `toolCalls` (its `content` may be ""),
 * and each call is answered by one `tool` message with the same `toolCallId`.
 */
export type ChatMessage =
  /** `cache`: this message ends a prefix the provider may cache (Anthropic `cache_control`). */
  | { role: "system"; content: string; cache?: boolean }
  | { role: "developer"; content: string }
  /** `parts`: the content as text and image parts, in order, when it has images (`content` is its text). */
  | { role: "user"; content: string; parts?: ContentPart[]; cache?: boolean }
  /** `reasoning`: what the model's turn returned in `ModelResult.reasoning`, sent back with it as is. */
  | { role: "assistant"; content: string; toolCalls?: ToolCall[]; reasoning?: CarriedReasoning }
  /** `content` is the tool's output as text: JSON text for structured outputs, or an error description. */
  | { role: "tool"; toolCallId: string; content: string };

/** A part of a user message: text, or an image (an https or data: URL) for a model that takes images. */
export type ContentPart =
  | { type: "text"; text: string }
  | { type: "image"; url: string; detail?: "auto" | "low" | "high" };

/**
 * Reasoning a provider returned with a turn and needs back, verbatim, when the conversation goes
 * on (Anthropic's thinking blocks and their signatures, which must precede the tool use they led
 * to). Opaque to everyone but `provider`; another provider's is ignored.
 */
export interface CarriedReasoning {
  provider: string;
  data: unknown;
}

export interface ToolDefinition {
  /** The toolKey (`^[a-zA-Z0-9_-]{1,64}$`, what OpenAI accepts as a function name). */
  name: string;
  description?: string;
  /** JSON Schema of the tool input (`type: "object"`, `properties`, `required`). */
  inputSchema: JsonSchema;
}

export type ResponseFormat =
  | { type: "text" }
  | { type: "json_schema"; name: string; schema: JsonSchema }
  /** Any JSON object (Chat Completions' JSON mode). */
  | { type: "json_object" };

/** Which tools the model may call in this turn; omitted = "auto". */
export type ToolChoice = "auto" | "none" | "required" | { name: string };

export interface ModelRequest {
  /** The model name within its provider: "gpt-4o-mini", not "openai/gpt-4o-mini". */
  model: string;
  messages: ChatMessage[];
  /** Tools the model may call in this turn; omitted or empty = none. */
  tools?: ToolDefinition[];
  /** Default `{ type: "text" }`. */
  responseFormat?: ResponseFormat;
  temperature?: number;
  maxOutputTokens?: number;
  toolChoice?: ToolChoice;
  /** Up to 4 sequences the answer stops at. */
  stop?: string[];
  seed?: number;
  topP?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  parallelToolCalls?: boolean;
  /**
   * Reasoning ("thinking") the model may spend before answering: a token budget (Anthropic
   * `thinking.budget_tokens`, Gemini `thinkingConfig.thinkingBudget`, Bedrock's Anthropic models)
   * or an effort (OpenAI `reasoning_effort`); a provider maps whichever it knows. Omitted: the
   * model's default.
   */
  reasoning?: { budgetTokens?: number; effort?: "low" | "medium" | "high" };
  /**
   * The run's variables (name → value). Only `local/echo` reads them, to fill same-named fields of
   * the tool inputs it makes up; other providers ignore them. Messages arrive rendered already.
   */
  variables?: Record<string, unknown>;
  /**
   * Cancels the call. An abort whose reason is a `TimeoutError` (e.g. `AbortSignal.timeout(ms)`,
   * a run-wide budget) rejects with `ProviderError` kind `provider_timeout`; any other abort
   * (shutdown, client gone) rejects with the signal's own `reason`, not a ProviderError.
   */
  signal?: AbortSignal;
  /**
   * When set, the provider streams the turn: each piece of text and of a tool call is handed here
   * as the model sends it, and the call still resolves to the whole turn (`ModelResult`). A stream
   * that breaks off is a `provider_error` (not retried once a piece has been handed on).
   */
  onDelta?: (delta: ModelDelta) => void;
  /**
   * Deadline of the whole call in milliseconds, retries and their waits included; past it the
   * call rejects with `provider_timeout`. Default: the provider's configured timeout
   * (PROVIDER_TIMEOUT_MS).
   */
  timeoutMs?: number;
  /**
   * Retries after the first attempt for this call, overriding the provider's configured ones
   * (PROVIDER_MAX_RETRIES): a model route sets 0 for a target that has another after it
   * (docs/providers.md "Routes"). A provider that does not retry ignores it.
   */
  maxRetries?: number;
}

/**
 * A piece of a streaming turn: answer text, or part of a tool call. A call's first delta carries
 * its `id` and `name`; later ones of the same `index` pieces of its arguments' JSON text.
 */
export type ModelDelta =
  | { type: "text"; text: string }
  | { type: "tool_call"; index: number; id?: string; name?: string; arguments: string };

/**
 * Why the model stopped: `stop` (a complete answer), `tool_calls` (see `toolCalls`; call again
 * with the results), `length` (maxOutputTokens reached: text may be cut and JSON unparseable),
 * `content_filter`, or `other` (anything else a compatible endpoint reports).
 */
export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "other";

/**
 * Token counts of one call, normalized the same way for every provider (each provider converts its
 * own semantics: Anthropic's `input_tokens` excludes cache reads and writes, Gemini's
 * `promptTokenCount` includes cached tokens and its `thoughtsTokenCount` is outside
 * `candidatesTokenCount`, OpenAI's `prompt_tokens` includes `cached_tokens`):
 * - `inputTokens`: every input token, cached and cache-written ones included;
 * - `cachedInputTokens`: the part of `inputTokens` read from the provider's prompt cache;
 * - `cacheWriteInputTokens`: the part of `inputTokens` written to the cache (Anthropic's
 *   `cache_creation_input_tokens`);
 * - `outputTokens`: every output token, reasoning (thinking) tokens included;
 * - `reasoningTokens`: the part of `outputTokens` spent on reasoning.
 * A class the provider did not report is absent (not 0).
 */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
  cacheWriteInputTokens?: number;
  reasoningTokens?: number;
}

export interface ModelResult {
  /** The answer text; "" when the model only called tools. For json_schema, the JSON text. */
  text: string;
  /**
   * The parsed answer when the request asked for `json_schema` and `text` is valid JSON; absent
   * otherwise (tool-call turns, truncated or non-JSON answers). Not validated against the schema:
   * that is the executor's job.
   */
  json?: unknown;
  /** Empty unless finishReason is "tool_calls". */
  toolCalls: ToolCall[];
  /** Reasoning to send back on this turn's assistant message (`ChatMessage` assistant `reasoning`), when the provider needs it. */
  reasoning?: CarriedReasoning;
  usage: TokenUsage;
  finishReason: FinishReason;
  /** Provider id and model name as requested ("openai", "gpt-4o-mini"), for the run record. */
  provider: string;
  model: string;
  /** How many times the call was retried after a 429/5xx/connection failure (0 = first try). */
  retries: number;
}

export interface ModelProvider {
  /** "local", "openai", or a configured compatible provider id such as "ollama". */
  readonly id: string;
  /** One model turn. Rejects with ProviderError (or the caller's abort reason, see `signal`). */
  generate(request: ModelRequest): Promise<ModelResult>;
}

export type ProviderErrorKind = "provider_error" | "provider_timeout";

export interface ProviderErrorInfo {
  provider: string;
  model: string;
  /** HTTP status of the provider's last answer, when there was one. */
  status?: number;
  /** Retries made before giving up. */
  retries?: number;
  /** What the provider asked to wait before another call (Retry-After), when it said. */
  retryAfterMs?: number;
  cause?: unknown;
}

/**
 * A provider failure. A DomainError, so the RPC layer maps `provider_error` → 502 and
 * `provider_timeout` → 504 (api.md "Conventions"); a run records `{ code: kind, message }`.
 * The message is safe to show: no credentials, and at most a short, redacted excerpt of what the
 * provider answered.
 */
export class ProviderError extends DomainError {
  declare readonly kind: ProviderErrorKind;
  readonly provider: string;
  readonly model: string;
  readonly status: number | undefined;
  readonly retries: number;
  readonly retryAfterMs: number | undefined;

  constructor(kind: ProviderErrorKind, message: string, info: ProviderErrorInfo) {
    super(kind, message);
    this.name = "ProviderError";
    this.provider = info.provider;
    this.model = info.model;
    this.status = info.status;
    this.retries = info.retries ?? 0;
    this.retryAfterMs = info.retryAfterMs;
    if (info.cause !== undefined) this.cause = info.cause;
  }
}

export function isProviderError(error: unknown): error is ProviderError {
  return error instanceof ProviderError;
}

/** A run's record of a provider failure: a rate limit (429) says so, with the wait it asked for. */
export function providerFailureOf(e: ProviderError): {
  code: string;
  message: string;
  rateLimited?: true;
  retryAfterMs?: number;
} {
  return {
    code: e.kind,
    message: e.message,
    ...(e.status === 429 ? { rateLimited: true as const } : {}),
    ...(e.status === 429 && e.retryAfterMs !== undefined
      ? { retryAfterMs: Math.max(0, Math.round(e.retryAfterMs)) }
      : {}),
  };
}

/**
 * What a call rejects with once the caller's signal has aborted (see `ModelRequest.signal`): a
 * provider_timeout ProviderError for a TimeoutError reason, else the reason itself.
 */
export function abortedCallError(signal: AbortSignal, info: ProviderErrorInfo): unknown {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === "TimeoutError") {
    return new ProviderError("provider_timeout", `${info.provider} did not answer before the caller's deadline`, {
      ...info,
      cause: reason,
    });
  }
  return reason;
}

/**
 * What every remote provider's factory takes (createOpenAIProvider, createAnthropicProvider, ...):
 * the provider id (the prefix of its model ids: "openai", "anthropic", or a connection's name),
 * its credentials and endpoint, and the call policy. Protocol-specific settings extend it.
 */
export interface RemoteProviderOptions {
  id: string;
  apiKey?: string;
  /** The endpoint's base URL; default the provider's public one. */
  baseUrl?: string;
  /** Default deadline of one call, retries included (ModelRequest.timeoutMs overrides). */
  timeoutMs: number;
  /** Retries after the first attempt on retryable failures (429, 5xx, 529, connection failures). */
  maxRetries: number;
  /** The fetch calls go through (default node:http's, http-fetch.ts). */
  fetch?: typeof fetch;
}

/**
 * The result with `json` set when the request asked for JSON (json_schema or json_object) and the
 * answer, which called no tool, parses; a truncated or non-JSON answer has no `json`, left to the
 * executor.
 */
export function withAnswerJson(result: ModelResult, request: Pick<ModelRequest, "responseFormat">): ModelResult {
  const json = request.responseFormat?.type === "json_schema" || request.responseFormat?.type === "json_object";
  if (json && result.toolCalls.length === 0 && result.text.trim() !== "") {
    try {
      result.json = JSON.parse(result.text);
    } catch {
      // not JSON: no `json`
    }
  }
  return result;
}
