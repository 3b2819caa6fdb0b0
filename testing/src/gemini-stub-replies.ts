/**
 * The Gemini stub's scripted answers (gemini-stub.ts): what a turn answers, and errors in the
 * shape of Google's REST errors (`{ error: { code, message, status, details } }`, the details as
 * `google.rpc` messages with their `@type`).
 */

/** `usageMetadata` of a GenerateContentResponse (the fields the stub sets). */
export interface GeminiStubUsage {
  promptTokenCount: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

export interface GeminiStubCall {
  name: string;
  args?: Record<string, unknown>;
  /** Gemini sends none on its API; set one to check it is sent back. */
  id?: string;
  /** A thought signature on this call's part (as thinking models send). */
  thoughtSignature?: string;
}

export type GeminiStubResponse = (
  | {
      type: "answer";
      /** Text pieces: one part each when streamed, joined into one part otherwise. */
      pieces: string[];
      calls?: GeminiStubCall[];
      /** A thought summary part before the answer (`thought: true`). */
      thought?: string;
      finishReason: string;
      /** Default: whitespace-separated words of the request's contents and of the answer. */
      usage?: GeminiStubUsage;
      /** No candidate: the prompt was blocked (`promptFeedback.blockReason`). */
      blockReason?: string;
      /** Streamed: end the connection after this many events, without the last one. */
      breakAfterEvents?: number;
    }
  | { type: "error"; status: number; headers?: Record<string, string>; body: unknown }
  /** Never answers: the connection stays open until the client gives up or the stub closes. */
  | { type: "hang" }
) & {
  /** Wait before this response. */
  delayMs?: number;
};

type Answer = Extract<GeminiStubResponse, { type: "answer" }>;

type AnswerOptions = {
  usage?: GeminiStubUsage;
  finishReason?: string;
  /** Split the text into these pieces when streamed (default word by word). */
  pieces?: string[];
  thought?: string;
  breakAfterEvents?: number;
};

const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** A Google REST error body. */
export function googleError(code: number, message: string, details: unknown[] = []): unknown {
  return { error: { code, message, status: STATUS_NAMES[code] ?? "UNKNOWN", ...(details.length ? { details } : {}) } };
}

export const geminiReply = {
  text(text: string, options: AnswerOptions = {}): Answer {
    const { finishReason, pieces, ...rest } = options;
    const split = pieces ?? text.match(/\S+\s*|\s+/g) ?? [text];
    return { type: "answer", pieces: split, finishReason: finishReason ?? "STOP", ...rest };
  },
  json(value: unknown, options: AnswerOptions = {}): Answer {
    return geminiReply.text(JSON.stringify(value), options);
  },
  /** Function calls (Gemini's finish reason for them is STOP), optionally after some text. */
  calls(calls: GeminiStubCall[], options: AnswerOptions & { text?: string } = {}): GeminiStubResponse {
    const { text, ...rest } = options;
    return { ...geminiReply.text(text ?? "", rest), pieces: text ? [text] : [], calls };
  },
  /** The prompt was blocked: no candidate, `promptFeedback.blockReason`. */
  blocked(blockReason = "SAFETY"): GeminiStubResponse {
    return { type: "answer", pieces: [], finishReason: "", blockReason };
  },
  error(status: number, message: string, options: { details?: unknown[]; headers?: Record<string, string> } = {}) {
    return {
      type: "error",
      status,
      body: googleError(status, message, options.details),
      ...(options.headers ? { headers: options.headers } : {}),
    } satisfies GeminiStubResponse as GeminiStubResponse;
  },
  /** 429 RESOURCE_EXHAUSTED with a QuotaFailure and, when given, a RetryInfo (`retryDelay` such as "0.2s"). */
  rateLimited(options: { retryDelay?: string; headers?: Record<string, string> } = {}): GeminiStubResponse {
    return geminiReply.error(429, "You exceeded your current quota, please check your plan and billing details.", {
      details: [
        {
          "@type": "type.googleapis.com/google.rpc.QuotaFailure",
          violations: [{ quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests" }],
        },
        ...(options.retryDelay
          ? [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: options.retryDelay }]
          : []),
      ],
      headers: options.headers,
    });
  },
  unavailable(): GeminiStubResponse {
    return geminiReply.error(503, "The model is overloaded. Please try again later.");
  },
  hang(): GeminiStubResponse {
    return { type: "hang" };
  },
  times(n: number, response: GeminiStubResponse): GeminiStubResponse[] {
    return Array.from({ length: n }, () => response);
  },
};
