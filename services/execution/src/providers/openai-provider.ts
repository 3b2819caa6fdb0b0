/**
 * OpenAI, and any endpoint speaking its Chat Completions protocol, through the official SDK.
 * Retries are the SDK's own (jittered exponential backoff on 408/409/429/5xx and connection
 * failures, honouring `retry-after-ms` and `Retry-After`), bounded by `maxRetries`. Around them
 * sits one deadline per call (`timeoutMs`, retries and waits included): past it the call rejects
 * with provider_timeout even while the SDK sleeps before a retry. A wrapper around fetch counts
 * the attempts of each call and turns a Retry-After that reaches past the deadline into an
 * immediate failure instead of a doomed wait.
 */
import { callDeadline, raceAbort } from "@kiln/kit/abort";
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai";
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import { createHttpFetch } from "./http-fetch.js";
import {
  abortedCallError,
  type ChatMessage,
  type FinishReason,
  type ModelProvider,
  type ModelRequest,
  type ModelResult,
  ProviderError,
  type ProviderErrorKind,
  type ToolCall,
} from "./provider.js";

export const OPENAI_BASE_URL = "https://api.openai.com/v1";

export interface OpenAIProviderOptions {
  /** "openai", or the id of a configured compatible provider ("ollama"). */
  id: string;
  /** Absent for a keyless endpoint: then no Authorization header is sent. */
  apiKey?: string;
  /** Default https://api.openai.com/v1. */
  baseUrl?: string;
  /** Deadline of a call whose request names none (PROVIDER_TIMEOUT_MS). */
  timeoutMs: number;
  /** Retries after the first attempt (PROVIDER_MAX_RETRIES). */
  maxRetries: number;
  /** false: send developer messages with role "system", for endpoints without the developer role. */
  developerRole?: boolean;
  /** Where maxOutputTokens goes; older compatible servers know only "max_tokens". */
  maxTokensParam?: "max_completion_tokens" | "max_tokens";
  /** The fetch the SDK's requests go through (default node:http's, see http-fetch.ts). */
  fetch?: typeof fetch;
}

/** Carries a call's id from `generate` to the fetch wrapper; removed before the request leaves. */
const CALL_HEADER = "x-kiln-provider-call";
const EXCERPT_CHARS = 200;

interface CallState {
  attempts: number;
  deadlineAt: number;
  /** Set when the provider asked for a wait past the deadline and the call stopped there. */
  retryAfterMs?: number;
}

export function createOpenAIProvider(options: OpenAIProviderOptions): ModelProvider {
  const { id } = options;
  const calls = new Map<string, CallState>();
  let callCount = 0;
  const baseFetch = options.fetch ?? createHttpFetch();
  const secrets = options.apiKey ? [options.apiKey] : [];

  async function fetchWithBudget(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const headers = new Headers(init?.headers);
    const callId = headers.get(CALL_HEADER);
    headers.delete(CALL_HEADER);
    const state = callId === null ? undefined : calls.get(callId);
    if (state) state.attempts++;
    // Redirects are refused: a model API that redirects is a wrong base URL (and the global fetch
    // copies every request body it might have to send again for one).
    const response = await baseFetch(input, { ...init, headers, redirect: "error" }).catch((e: unknown) => {
      const cause = e instanceof TypeError ? (e.cause as { message?: unknown; code?: unknown } | undefined) : undefined;
      if (cause && cause.message === "unexpected redirect") cause.code = "REDIRECT_REFUSED";
      throw e;
    });
    if (!state || response.ok || !isRetryable(response) || state.attempts > options.maxRetries) return response;
    const waitMs = retryAfterMsOf(response.headers);
    if (waitMs === undefined || Date.now() + waitMs < state.deadlineAt) return response;
    // The SDK would sleep past the deadline: tell it not to retry, so the call fails now with this answer.
    state.retryAfterMs = waitMs;
    const marked = new Headers(response.headers);
    marked.set("x-should-retry", "false");
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers: marked });
  }

  const client = new OpenAI({
    // Everything explicit: the SDK would otherwise read OPENAI_* variables itself.
    apiKey: options.apiKey ?? "keyless",
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    baseURL: options.baseUrl ?? OPENAI_BASE_URL,
    maxRetries: options.maxRetries,
    timeout: options.timeoutMs,
    logLevel: "off",
    fetch: fetchWithBudget,
    ...(options.apiKey ? {} : { defaultHeaders: { Authorization: null } }),
  });

  return {
    id,
    async generate(request) {
      const timeoutMs = Math.max(1, Math.ceil(request.timeoutMs ?? options.timeoutMs));
      const deadline = callDeadline(
        request.signal,
        timeoutMs,
        () => new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError"),
      );
      const { signal } = deadline;
      const callId = String(++callCount);
      const state: CallState = { attempts: 0, deadlineAt: Date.now() + timeoutMs };
      calls.set(callId, state);
      const fail = (
        kind: ProviderErrorKind,
        message: string,
        extra: { status?: number; cause?: unknown; retryAfterMs?: number } = {},
      ) =>
        new ProviderError(kind, message, {
          provider: id,
          model: request.model,
          retries: Math.max(0, state.attempts - 1),
          ...extra,
        });
      try {
        signal.throwIfAborted();
        const completion = await raceAbort(
          client.chat.completions.create(toRequestBody(request, options), {
            signal,
            timeout: timeoutMs,
            headers: { [CALL_HEADER]: callId },
          }),
          signal,
        );
        return toResult(completion, request, id, Math.max(0, state.attempts - 1), fail);
      } catch (error) {
        if (error instanceof ProviderError) throw error;
        if (request.signal?.aborted) {
          throw abortedCallError(request.signal, {
            provider: id,
            model: request.model,
            retries: Math.max(0, state.attempts - 1),
          });
        }
        if (deadline.timedOut() || error instanceof APIConnectionTimeoutError) {
          throw fail("provider_timeout", `${id} did not answer within ${timeoutMs} ms${retriesNote(state)}`, {
            cause: error,
          });
        }
        if (error instanceof APIConnectionError) {
          throw fail("provider_error", `could not reach ${id}${connectionDetail(error)}${retriesNote(state)}`, {
            cause: error,
          });
        }
        if (error instanceof APIError && typeof error.status === "number") {
          const excerpt = safeExcerpt(providerMessageOf(error), secrets);
          const wait =
            state.retryAfterMs === undefined
              ? ""
              : `; it asked to retry after ${Math.ceil(state.retryAfterMs)} ms, past the deadline`;
          throw fail(
            "provider_error",
            `${id} answered HTTP ${error.status}${excerpt ? `: ${excerpt}` : ""}${wait}${retriesNote(state)}`,
            {
              status: error.status,
              cause: error,
              retryAfterMs: state.retryAfterMs ?? (error.headers ? retryAfterMsOf(error.headers) : undefined),
            },
          );
        }
        throw fail("provider_error", `${id} returned an answer that could not be read`, { cause: error });
      } finally {
        deadline.dispose();
        calls.delete(callId);
      }
    },
  };
}

function toRequestBody(request: ModelRequest, options: OpenAIProviderOptions): ChatCompletionCreateParamsNonStreaming {
  const developerRole = options.developerRole ?? true;
  const body: ChatCompletionCreateParamsNonStreaming = {
    model: request.model,
    messages: request.messages.map((m) => toMessageParam(m, developerRole)),
  };
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: "function",
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        parameters: t.inputSchema,
      },
    }));
  }
  if (request.responseFormat?.type === "json_schema") {
    body.response_format = {
      type: "json_schema",
      // strict: false accepts any JSON Schema; strict mode would demand additionalProperties: false everywhere.
      json_schema: {
        name: schemaName(request.responseFormat.name),
        schema: request.responseFormat.schema,
        strict: false,
      },
    };
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.maxOutputTokens !== undefined) {
    body[options.maxTokensParam ?? "max_completion_tokens"] = request.maxOutputTokens;
  }
  return body;
}

function toMessageParam(message: ChatMessage, developerRole: boolean): ChatCompletionMessageParam {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: message.content };
    case "developer":
      return { role: developerRole ? "developer" : "system", content: message.content };
    case "assistant": {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: "assistant", content: message.content };
      return {
        role: "assistant",
        content: message.content === "" ? null : message.content,
        tool_calls: calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.input ?? {}) },
        })),
      };
    }
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
  }
}

function toResult(
  completion: ChatCompletion,
  request: ModelRequest,
  provider: string,
  retries: number,
  fail: (kind: ProviderErrorKind, message: string) => ProviderError,
): ModelResult {
  const choice = completion.choices?.[0];
  if (!choice?.message) throw fail("provider_error", `${provider} answered without a choice`);
  const { message } = choice;
  const toolCalls: ToolCall[] = [];
  for (const call of message.tool_calls ?? []) {
    if (call.type !== "function") continue;
    const args = call.function.arguments;
    let input: unknown = {};
    try {
      if (args.trim() !== "") input = JSON.parse(args);
    } catch {
      throw fail("provider_error", `${provider} called tool "${call.function.name}" with arguments that are not JSON`);
    }
    toolCalls.push({ id: call.id, name: call.function.name, input });
  }
  const text = message.content ?? message.refusal ?? "";
  const result: ModelResult = {
    text,
    toolCalls,
    usage: {
      inputTokens: completion.usage?.prompt_tokens ?? 0,
      outputTokens: completion.usage?.completion_tokens ?? 0,
    },
    finishReason: toolCalls.length > 0 ? "tool_calls" : finishReasonOf(choice.finish_reason),
    provider,
    model: request.model,
    retries,
  };
  if (request.responseFormat?.type === "json_schema" && toolCalls.length === 0 && text.trim() !== "") {
    try {
      result.json = JSON.parse(text);
    } catch {
      // Left to the executor: a truncated or non-JSON answer has no `json`.
    }
  }
  return result;
}

function finishReasonOf(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "stop":
    case "length":
    case "tool_calls":
    case "content_filter":
      return reason;
    case "function_call":
      return "tool_calls";
    default:
      return "other";
  }
}

function isRetryable(response: Response): boolean {
  if (response.headers.get("x-should-retry") === "false") return false;
  const s = response.status;
  return s === 408 || s === 409 || s === 429 || s >= 500;
}

/** The wait a response asks for, read as the SDK reads it (retry-after-ms first, then Retry-After). */
function retryAfterMsOf(headers: Headers): number | undefined {
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (!Number.isNaN(ms) && ms > 0) return ms;
  const raw = headers.get("retry-after");
  if (!raw) return undefined;
  const seconds = Number.parseFloat(raw);
  if (!Number.isNaN(seconds)) return seconds * 1000;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : at - Date.now();
}

function retriesNote(state: CallState): string {
  const retries = state.attempts - 1;
  return retries > 0 ? ` (after ${retries} ${retries === 1 ? "retry" : "retries"})` : "";
}

function connectionDetail(error: APIConnectionError): string {
  // undici: TypeError("fetch failed") with cause { code: "ECONNREFUSED" }; only the code is shown.
  const cause = error.cause as { cause?: { code?: unknown }; code?: unknown } | undefined;
  const code = cause?.cause?.code ?? cause?.code;
  return typeof code === "string" && /^[A-Z_]+$/.test(code) ? ` (${code})` : "";
}

function providerMessageOf(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  if (body && typeof body.message === "string") return body.message;
  // The SDK's message is "<status> <text>"; without a JSON body it holds the raw body text.
  return error.message.replace(/^\d{3}\s*/, "").replace(/^status code \(no body\)$/, "");
}

/** A short, single-line excerpt with credentials removed: the only provider text shown to clients. */
export function safeExcerpt(text: string, secrets: string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.replaceAll(secret, "[redacted]");
  out = out
    .replace(/\bBearer\s+\S+/gi, "Bearer [redacted]")
    .replace(/\b(sk|rk|pk|sess)[-_][A-Za-z0-9*._-]{4,}/g, "[redacted]")
    .replace(/\s+/g, " ")
    .trim();
  return out.length > EXCERPT_CHARS ? `${Array.from(out).slice(0, EXCERPT_CHARS).join("")}…` : out;
}

/** OpenAI accepts `^[a-zA-Z0-9_-]{1,64}$` as a response format name. */
function schemaName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
  return cleaned === "" ? "response" : cleaned;
}
