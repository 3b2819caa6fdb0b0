/**
 * The Anthropic stub's scripted answers (anthropic-stub.ts): their shape and the helpers that make
 * them. A message is given as its content blocks (text, thinking with its signature, tool_use) in
 * the SDK's own types; errors as Anthropic's error body `{type: "error", error: {type, message}}`.
 */

import type { ContentBlock, StopReason, Usage } from "@anthropic-ai/sdk/resources/messages";
import type { ErrorType } from "@anthropic-ai/sdk/resources/shared";

/** The usage counts a reply reports; absent ones default (input: words of the request, output: of the answer). */
export type AnthropicStubUsage = Partial<
  Pick<Usage, "input_tokens" | "output_tokens" | "cache_read_input_tokens" | "cache_creation_input_tokens">
> & { thinking_tokens?: number };

/** How a message streams when the request asks for a stream (anthropic-stub-stream.ts). */
export interface AnthropicStubStreaming {
  /** The wait before each delta; default the stub's `chunkDelayMs`. */
  chunkDelayMs?: number;
  /** Break the connection off after this many deltas. */
  breakAfterDeltas?: number;
  /** Send an `error` event (this error type) after this many deltas, then end the stream. */
  errorAfterDeltas?: { deltas: number; type: ErrorType; message: string };
}

export type AnthropicStubResponse = (
  | ({
      type: "message";
      content: ContentBlock[];
      stopReason: StopReason;
      stopSequence?: string | null;
      usage?: AnthropicStubUsage;
    } & AnthropicStubStreaming)
  | { type: "error"; status: number; headers?: Record<string, string>; body: unknown }
  /** Never answers: the connection stays open until the client gives up or the stub closes. */
  | { type: "hang" }
) & {
  /** Extra wait before this response, on top of the stub's latency. */
  delayMs?: number;
};

export interface StubToolUse {
  id?: string;
  name: string;
  input: unknown;
}

export interface StubThinking {
  thinking: string;
  signature: string;
}

type MessageOptions = { usage?: AnthropicStubUsage; thinking?: StubThinking } & AnthropicStubStreaming;

const thinkingBlocks = (t: StubThinking | undefined): ContentBlock[] =>
  t ? [{ type: "thinking", thinking: t.thinking, signature: t.signature }] : [];

let toolUses = 0;

export const anthropicReply = {
  /** A text answer (`end_turn`), optionally after a thinking block. */
  text(text: string, options: MessageOptions & { stopReason?: StopReason; stopSequence?: string } = {}) {
    const { thinking, stopReason, stopSequence, ...rest } = options;
    return {
      type: "message",
      content: [...thinkingBlocks(thinking), { type: "text", text, citations: null }],
      stopReason: stopReason ?? "end_turn",
      ...(stopSequence !== undefined ? { stopSequence } : {}),
      ...rest,
    } satisfies AnthropicStubResponse as AnthropicStubResponse;
  },
  json(value: unknown, options: MessageOptions = {}): AnthropicStubResponse {
    return anthropicReply.text(JSON.stringify(value), options);
  },
  /** A turn that calls tools (`tool_use`): thinking first, then any text, then the calls. */
  toolUse(calls: StubToolUse[], options: MessageOptions & { text?: string } = {}): AnthropicStubResponse {
    const { thinking, text, ...rest } = options;
    return {
      type: "message",
      content: [
        ...thinkingBlocks(thinking),
        ...(text ? [{ type: "text" as const, text, citations: null }] : []),
        ...calls.map((c) => ({
          type: "tool_use" as const,
          id: c.id ?? `toolu_stub_${++toolUses}`,
          name: c.name,
          input: c.input,
          caller: { type: "direct" as const },
        })),
      ],
      stopReason: "tool_use",
      ...rest,
    } as AnthropicStubResponse;
  },
  /** Any content blocks, any stop reason (refusal, max_tokens...). */
  message(content: ContentBlock[], stopReason: StopReason, options: MessageOptions = {}): AnthropicStubResponse {
    return { type: "message", content, stopReason, ...options };
  },
  /** Anthropic's error body with this status. */
  error(status: number, type: ErrorType, message: string, headers?: Record<string, string>): AnthropicStubResponse {
    return { type: "error", status, headers, body: { type: "error", error: { type, message }, request_id: null } };
  },
  /** 429 `rate_limit_error` with `retry-after` (seconds), as Anthropic sends it. */
  rateLimited(options: { retryAfterSeconds?: number } = {}): AnthropicStubResponse {
    const headers =
      options.retryAfterSeconds === undefined ? undefined : { "retry-after": String(options.retryAfterSeconds) };
    return anthropicReply.error(
      429,
      "rate_limit_error",
      "Number of request tokens has exceeded your per-minute rate limit",
      headers,
    );
  },
  /** 529 `overloaded_error`: Anthropic's API is temporarily overloaded. */
  overloaded(options: { retryAfterSeconds?: number } = {}): AnthropicStubResponse {
    const headers =
      options.retryAfterSeconds === undefined ? undefined : { "retry-after": String(options.retryAfterSeconds) };
    return anthropicReply.error(529, "overloaded_error", "Overloaded", headers);
  },
  /** 500 `api_error`. */
  serverError(options: { retryAfterSeconds?: number } = {}): AnthropicStubResponse {
    const headers =
      options.retryAfterSeconds === undefined ? undefined : { "retry-after": String(options.retryAfterSeconds) };
    return anthropicReply.error(500, "api_error", "Internal server error", headers);
  },
  hang(): AnthropicStubResponse {
    return { type: "hang" };
  },
  times(n: number, response: AnthropicStubResponse): AnthropicStubResponse[] {
    return Array.from({ length: n }, () => response);
  },
};
