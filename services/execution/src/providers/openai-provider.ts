/**
 * OpenAI, and any endpoint speaking its Chat Completions protocol: one JSON POST per attempt
 * through node:http (http-fetch.ts), the answer parsed as the wire types of the official SDK
 * describe it. The SDK itself is not on the path: building its request and reading its answer cost
 * about half a millisecond of a run's latency and a quarter of a millisecond of CPU per call, for
 * a call that is one POST (measured against this code in the same process, sequentially).
 *
 * Retries follow the SDK's policy: connection failures and 408/409/429/5xx (an `x-should-retry`
 * header overrides), waiting what `retry-after-ms` or `Retry-After` asks when under a minute, else
 * 0.5 s doubling up to 8 s less up to 25 % jitter; at most `maxRetries` after the first attempt.
 * Around them sits one deadline per call (`timeoutMs`, retries and waits included): past it the
 * call rejects with provider_timeout, waits included; a Retry-After that reaches past the deadline
 * fails the call at once instead of waiting in vain.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { callDeadline } from "@kiln/kit/abort";
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
  /** The fetch the requests go through (default node:http's, see http-fetch.ts). */
  fetch?: typeof fetch;
}

const EXCERPT_CHARS = 200;
/** A wait asked for by the provider is honoured below this; above it the backoff applies (as the SDK does). */
const MAX_ASKED_WAIT_MS = 60_000;
const INITIAL_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;

/** One attempt's outcome: an answer with its status, or a connection that failed. */
type Attempt = { status: number; headers: Headers; text: string } | { failed: unknown };

export function createOpenAIProvider(options: OpenAIProviderOptions): ModelProvider {
  const { id } = options;
  const send = options.fetch ?? createHttpFetch();
  const secrets = options.apiKey ? [options.apiKey] : [];
  const url = `${(options.baseUrl ?? OPENAI_BASE_URL).replace(/\/+$/, "")}/chat/completions`;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json",
    "user-agent": "kiln",
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
  };

  async function attempt(body: string, signal: AbortSignal): Promise<Attempt> {
    try {
      // Redirects are refused: a model API that redirects is a wrong base URL.
      const response = await send(url, { method: "POST", headers, body, signal, redirect: "error" });
      return { status: response.status, headers: response.headers, text: await response.text() };
    } catch (failed) {
      if (signal.aborted) throw failed;
      return { failed };
    }
  }

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
      const deadlineAt = Date.now() + timeoutMs;
      let attempts = 0;
      const retriesNote = () =>
        attempts > 1 ? ` (after ${attempts - 1} ${attempts === 2 ? "retry" : "retries"})` : "";
      const fail = (
        kind: ProviderErrorKind,
        message: string,
        extra: { status?: number; cause?: unknown; retryAfterMs?: number } = {},
      ) =>
        new ProviderError(kind, message, {
          provider: id,
          model: request.model,
          retries: Math.max(0, attempts - 1),
          ...extra,
        });
      try {
        signal.throwIfAborted();
        const body = JSON.stringify(toRequestBody(request, options));
        for (;;) {
          attempts++;
          const outcome = await attempt(body, signal);
          if ("failed" in outcome) {
            if (!isRetryableFailure(outcome.failed) || attempts > options.maxRetries) {
              throw fail("provider_error", `could not reach ${id}${connectionDetail(outcome.failed)}${retriesNote()}`, {
                cause: outcome.failed,
              });
            }
            await sleep(backoffMs(attempts - 1), undefined, { signal });
            continue;
          }
          if (outcome.status >= 200 && outcome.status < 300) {
            let completion: ChatCompletion;
            try {
              completion = JSON.parse(outcome.text) as ChatCompletion;
            } catch (cause) {
              throw fail("provider_error", `${id} returned an answer that could not be read`, { cause });
            }
            return toResult(completion, request, id, attempts - 1, fail);
          }
          const asked = retryAfterMsOf(outcome.headers);
          if (!isRetryable(outcome.status, outcome.headers) || attempts > options.maxRetries) {
            throw answeredError(outcome, asked, false);
          }
          // Waiting as asked would outlast the deadline: fail now with this answer.
          if (asked !== undefined && Date.now() + asked >= deadlineAt) throw answeredError(outcome, asked, true);
          const waitMs =
            asked !== undefined && asked >= 0 && asked < MAX_ASKED_WAIT_MS ? asked : backoffMs(attempts - 1);
          await sleep(waitMs, undefined, { signal });
        }
      } catch (error) {
        if (error instanceof ProviderError) throw error;
        if (request.signal?.aborted) {
          throw abortedCallError(request.signal, {
            provider: id,
            model: request.model,
            retries: Math.max(0, attempts - 1),
          });
        }
        if (deadline.timedOut()) {
          throw fail("provider_timeout", `${id} did not answer within ${timeoutMs} ms${retriesNote()}`, {
            cause: error,
          });
        }
        throw fail("provider_error", `${id} returned an answer that could not be read`, { cause: error });
      } finally {
        deadline.dispose();
      }

      /** The provider's error answer as the call's failure; `pastDeadline`: it asked for a wait past the deadline. */
      function answeredError(
        answer: { status: number; text: string },
        asked: number | undefined,
        pastDeadline: boolean,
      ) {
        const excerpt = safeExcerpt(providerMessageOf(answer.text), secrets);
        const wait = pastDeadline ? `; it asked to retry after ${Math.ceil(asked ?? 0)} ms, past the deadline` : "";
        return fail(
          "provider_error",
          `${id} answered HTTP ${answer.status}${excerpt ? `: ${excerpt}` : ""}${wait}${retriesNote()}`,
          {
            status: answer.status,
            retryAfterMs: asked,
          },
        );
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

function isRetryable(status: number, headers: Headers): boolean {
  const told = headers.get("x-should-retry");
  if (told === "true") return true;
  if (told === "false") return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** A connection that failed is tried again, except a refused redirect (a wrong base URL stays wrong). */
function isRetryableFailure(failed: unknown): boolean {
  return codeOf(failed) !== "REDIRECT_REFUSED";
}

/** The SDK's backoff before retry number `retriesSoFar + 1`: 0.5 s doubling up to 8 s, less up to 25 %. */
function backoffMs(retriesSoFar: number): number {
  return Math.min(INITIAL_BACKOFF_MS * 2 ** retriesSoFar, MAX_BACKOFF_MS) * (1 - Math.random() * 0.25);
}

/** The wait a response asks for: retry-after-ms first, then Retry-After (seconds or an HTTP date). */
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

/** The socket error's code of a failed fetch: TypeError("fetch failed") with cause { code: "ECONNREFUSED" }. */
function codeOf(failed: unknown): string | undefined {
  const cause = (failed as { cause?: { code?: unknown; message?: unknown; cause?: { code?: unknown } } } | undefined)
    ?.cause;
  // The global fetch (a `fetch` option) refuses a redirect with this message and no code.
  if (cause?.message === "unexpected redirect") return "REDIRECT_REFUSED";
  const code = cause?.code ?? cause?.cause?.code;
  return typeof code === "string" && /^[A-Z_]+$/.test(code) ? code : undefined;
}

function connectionDetail(failed: unknown): string {
  const code = codeOf(failed);
  return code ? ` (${code})` : "";
}

/** The provider's own message of an error answer: `error.message` of a JSON body, else the raw body. */
function providerMessageOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string } | null;
    const error = body?.error;
    if (typeof error === "string") return error;
    if (error && typeof error.message === "string") return error.message;
    if (error !== undefined) return JSON.stringify(error);
  } catch {
    // Not JSON: the text itself.
  }
  return text;
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
