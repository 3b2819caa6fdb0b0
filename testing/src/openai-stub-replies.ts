/** The OpenAI stub's scripted answers (openai-stub.ts): their shape and the helpers that make them. */
import type { ResponseError } from "openai/resources/responses/responses";

type ResponseErrorCode = ResponseError["code"];

/**
 * A completion's `usage` as Chat Completions sends it: `prompt_tokens` includes the
 * `prompt_tokens_details.cached_tokens` read from the prompt cache, `completion_tokens` includes
 * the `completion_tokens_details.reasoning_tokens` (`total_tokens` is added by the stub).
 */
export interface StubUsage {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number; audio_tokens?: number };
  completion_tokens_details?: {
    reasoning_tokens?: number;
    audio_tokens?: number;
    accepted_prediction_tokens?: number;
    rejected_prediction_tokens?: number;
  };
}

export interface StubToolCall {
  id?: string;
  name: string;
  /** An object is sent as its JSON text; a string as is (to send broken arguments). */
  arguments: unknown;
}

/** How a completion streams when the request asks for a stream (openai-stub-stream.ts). */
export interface StubStreaming {
  /** The content's pieces; default word by word. */
  pieces?: string[];
  /** The wait before each piece; default the stub's `chunkDelayMs`. */
  chunkDelayMs?: number;
  /** Break the connection off after this many pieces. */
  breakAfterChunks?: number;
}

export type StubResponse = (
  | ({
      type: "completion";
      content: string | null;
      toolCalls?: StubToolCall[];
      finishReason: string;
      /** Default: whitespace-separated words of the request's messages and of the answer. */
      usage?: StubUsage;
    } & StubStreaming)
  | { type: "error"; status: number; headers?: Record<string, string>; body: unknown }
  /**
   * The Responses API's failed response (`status: "failed"` with `error: {code, message}`, or the
   * `response.failed` event of a stream); Chat Completions answers it as a 500.
   */
  | { type: "failed"; code: ResponseErrorCode; message: string }
  /** Never answers: the connection stays open until the client gives up or the stub closes. */
  | { type: "hang" }
) & {
  /** Extra wait before this response, on top of the stub's latency. */
  delayMs?: number;
};

export const stubReply = {
  text(content: string, options: { usage?: StubUsage; finishReason?: string } & StubStreaming = {}): StubResponse {
    const { finishReason, ...rest } = options;
    return { type: "completion", content, finishReason: finishReason ?? "stop", ...rest };
  },
  json(value: unknown, options: { usage?: StubUsage } = {}): StubResponse {
    return stubReply.text(JSON.stringify(value), options);
  },
  toolCalls(calls: StubToolCall[], options: { usage?: StubUsage } & StubStreaming = {}): StubResponse {
    return { type: "completion", content: null, toolCalls: calls, finishReason: "tool_calls", ...options };
  },
  /** An OpenAI-style error body `{ error: { message, type, code } }`. */
  error(
    status: number,
    options: { message?: string; type?: string; code?: string | null; headers?: Record<string, string> } = {},
  ): StubResponse {
    return {
      type: "error",
      status,
      headers: options.headers,
      body: {
        error: {
          message: options.message ?? `stub error ${status}`,
          type: options.type ?? (status >= 500 ? "server_error" : "invalid_request_error"),
          param: null,
          code: options.code ?? null,
        },
      },
    };
  },
  /** 429 with `Retry-After` (seconds) and/or `retry-after-ms`, as OpenAI sends them. */
  rateLimited(options: { retryAfterSeconds?: number; retryAfterMs?: number } = {}): StubResponse {
    const headers: Record<string, string> = {};
    if (options.retryAfterSeconds !== undefined) headers["retry-after"] = String(options.retryAfterSeconds);
    if (options.retryAfterMs !== undefined) headers["retry-after-ms"] = String(options.retryAfterMs);
    return stubReply.error(429, {
      message: "Rate limit reached",
      type: "requests",
      code: "rate_limit_exceeded",
      headers,
    });
  },
  /** 500; `retryAfterMs` keeps the SDK's backoff short in tests. */
  serverError(options: { retryAfterMs?: number } = {}): StubResponse {
    const headers = options.retryAfterMs === undefined ? undefined : { "retry-after-ms": String(options.retryAfterMs) };
    return stubReply.error(500, { message: "The server had an error while processing your request.", headers });
  },
  /** A Responses API response that failed (a 500 on Chat Completions). */
  failed(message = "The model failed to generate a response.", code: ResponseErrorCode = "server_error"): StubResponse {
    return { type: "failed", code, message };
  },
  hang(): StubResponse {
    return { type: "hang" };
  },
  times(n: number, response: StubResponse): StubResponse[] {
    return Array.from({ length: n }, () => response);
  },
};
