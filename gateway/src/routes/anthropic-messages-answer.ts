/**
 * A stored Kiln run as an Anthropic `message` (docs/anthropic-compatible.md "Response"): the run's
 * answer read as Chat Completions reads it (`chatAnswerOf`), laid out as content blocks (a `text`
 * block, a `tool_use` block per call of the caller's tools), its stop reason in Anthropic's words,
 * and the usage in Anthropic's token classes: Kiln's `inputTokens` counts every input token, while
 * Anthropic's `input_tokens` leaves out the tokens read from and written to the prompt cache.
 */
import type { Run } from "@kiln/proto/execution";
import { type ChatAnswer, chatAnswerOf } from "./openai-chat-answer.js";

export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "refusal";

export interface TextBlock {
  type: "text";
  text: string;
  citations: null;
}

export interface ToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
}

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  /** null when the run's provider did not report its prompt cache. */
  cache_creation_input_tokens: number | null;
  cache_read_input_tokens: number | null;
  /** Present when the run reported its reasoning (thinking) tokens, a part of `output_tokens`. */
  output_tokens_details?: { thinking_tokens: number };
  /** Kiln's: the run's estimated cost in USD, null when a model without a price took part. */
  cost_usd: number | null;
}

/** The run record's token classes; the cache and reasoning ones only when the run reports them. */
type RunUsage = Partial<
  Record<"inputTokens" | "outputTokens" | "cachedInputTokens" | "cacheWriteInputTokens" | "reasoningTokens", unknown>
>;

const count = (v: unknown): number | undefined =>
  typeof v === "bigint" || typeof v === "number" ? Number(v) : undefined;

/** The message id of a run's answer (the run id is also in `x-kiln-run-id`). */
export const messageIdOf = (run: { id: string }) => `msg_${run.id}`;

const STOP_REASONS: Record<ChatAnswer["finishReason"], StopReason> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  length: "max_tokens",
  content_filter: "refusal",
};

export const stopReasonOf = (answer: ChatAnswer): StopReason => STOP_REASONS[answer.finishReason];

/** The run's usage in Anthropic's classes: input without the cache reads and writes, which have their own counts. */
export function anthropicUsageOf(run: Pick<Run, "usage" | "estimatedCostUsd">): AnthropicUsage {
  const usage = (run.usage ?? {}) as RunUsage;
  const cacheRead = count(usage.cachedInputTokens);
  const cacheWrite = count(usage.cacheWriteInputTokens);
  const reasoning = count(usage.reasoningTokens);
  const input = (count(usage.inputTokens) ?? 0) - (cacheRead ?? 0) - (cacheWrite ?? 0);
  return {
    input_tokens: Math.max(0, input),
    output_tokens: count(usage.outputTokens) ?? 0,
    cache_creation_input_tokens: cacheWrite ?? null,
    cache_read_input_tokens: cacheRead ?? null,
    ...(reasoning !== undefined && { output_tokens_details: { thinking_tokens: reasoning } }),
    cost_usd: run.estimatedCostUsd ?? null,
  };
}

export const textBlock = (text: string): TextBlock => ({ type: "text", text, citations: null });

/** A succeeded run's content: its text (unless it only called tools), then its calls. */
export function contentOf(answer: ChatAnswer): (TextBlock | ToolUseBlock)[] {
  const calls = answer.toolCalls.map(
    (c): ToolUseBlock => ({
      type: "tool_use",
      id: c.id,
      name: c.function.name,
      input: JSON.parse(c.function.arguments),
    }),
  );
  return answer.content === null ? calls : [textBlock(answer.content), ...calls];
}

/** The fields every `message` carries. */
export const messageBase = (run: { id: string }, model: string) => ({
  id: messageIdOf(run),
  type: "message" as const,
  role: "assistant" as const,
  model,
});

/** The `message` of a succeeded run. */
export function messageOf(run: Run, model: string) {
  const answer = chatAnswerOf(run);
  return {
    ...messageBase(run, model),
    content: contentOf(answer),
    stop_reason: stopReasonOf(answer),
    stop_sequence: null,
    usage: anthropicUsageOf(run),
  };
}
