/**
 * A Converse answer (whole, or assembled from the event stream) as a model result: the text
 * blocks, the toolUse blocks as tool calls, the stop reason, and the usage in Kiln's token classes
 * (provider.ts TokenUsage; docs/providers.md "Bedrock").
 */
import type { TokenUsage as ConverseUsage } from "@aws-sdk/client-bedrock-runtime";
import type { FinishReason, ModelRequest, ModelResult, TokenUsage, ToolCall } from "./provider.js";
import { withAnswerJson } from "./provider.js";
import type { Fail } from "./remote-call.js";

/** The JSON answer of `/converse` (the fields read here). */
export interface ConverseAnswer {
  output?: {
    message?: {
      role?: string;
      content?: { text?: string; toolUse?: { toolUseId?: string; name?: string; input?: unknown } }[];
    };
  };
  stopReason?: string;
  usage?: Partial<ConverseUsage>;
}

export function toBedrockResult(
  answer: ConverseAnswer,
  request: ModelRequest,
  provider: string,
  retries: number,
  fail: Fail,
): ModelResult {
  const message = answer.output?.message;
  if (!message) throw fail("provider_error", `${provider} answered without a message`);
  let text = "";
  const toolCalls: ToolCall[] = [];
  for (const block of message.content ?? []) {
    if (typeof block.text === "string") text += block.text;
    const use = block.toolUse;
    if (use) toolCalls.push({ id: use.toolUseId ?? "", name: use.name ?? "", input: use.input ?? {} });
  }
  const result: ModelResult = {
    text,
    toolCalls,
    usage: usageOf(answer.usage),
    finishReason: toolCalls.length > 0 ? "tool_calls" : stopReasonOf(answer.stopReason),
    provider,
    model: request.model,
    retries,
  };
  return withAnswerJson(result, request);
}

/**
 * Converse's `inputTokens` leaves out the tokens read from and written to the prompt cache
 * (`totalTokens` = input + output + cache reads + cache writes), so Kiln's inputTokens adds them.
 */
export function usageOf(usage: Partial<ConverseUsage> | undefined): TokenUsage {
  const read = usage?.cacheReadInputTokens;
  const written = usage?.cacheWriteInputTokens;
  return {
    inputTokens: (usage?.inputTokens ?? 0) + (read ?? 0) + (written ?? 0),
    outputTokens: usage?.outputTokens ?? 0,
    ...(read !== undefined ? { cachedInputTokens: read } : {}),
    ...(written !== undefined ? { cacheWriteInputTokens: written } : {}),
  };
}

export function stopReasonOf(reason: string | undefined): FinishReason {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
    case undefined:
      return "stop";
    case "tool_use":
      return "tool_calls";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "guardrail_intervened":
    case "content_filtered":
      return "content_filter";
    default:
      return "other";
  }
}
