/**
 * A Gemini answer (a GenerateContentResponse, whole or assembled from a stream) as a model
 * result: the text of the first candidate (thought summaries left out), its function calls with
 * ids (Gemini's own when it sent one, else made up here: MADE_UP_CALL_ID), the finish reason and
 * the usage in Kiln's token classes (provider.ts TokenUsage; docs/providers.md "Gemini").
 */
import { randomUUID } from "node:crypto";
import type {
  Candidate,
  GenerateContentResponsePromptFeedback,
  GenerateContentResponseUsageMetadata,
} from "@google/genai";
import { MADE_UP_CALL_ID } from "./gemini-wire.js";
import type { FinishReason, ModelRequest, ModelResult, TokenUsage, ToolCall } from "./provider.js";
import { withAnswerJson } from "./provider.js";
import type { Fail } from "./remote-call.js";

/** A GenerateContentResponse as the REST API sends it (the SDK's class of that name adds getters). */
export interface GeminiResponse {
  candidates?: Candidate[];
  promptFeedback?: GenerateContentResponsePromptFeedback;
  usageMetadata?: GenerateContentResponseUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

/** Gives each function call of the first candidate an id, in place; `remember` keeps its thought signature. */
export function assignCallIds(response: GeminiResponse, remember: (id: string, signature: string) => void): void {
  for (const part of response.candidates?.[0]?.content?.parts ?? []) {
    if (!part.functionCall) continue;
    part.functionCall.id ||= `${MADE_UP_CALL_ID}${randomUUID()}`;
    if (part.thoughtSignature) remember(part.functionCall.id, part.thoughtSignature);
  }
}

export function toGeminiResult(
  response: GeminiResponse,
  request: ModelRequest,
  provider: string,
  retries: number,
  fail: Fail,
): ModelResult {
  const candidate = response.candidates?.[0];
  const blocked = response.promptFeedback?.blockReason;
  if (!candidate && !blocked) throw fail("provider_error", `${provider} answered without a candidate`);
  let text = "";
  const toolCalls: ToolCall[] = [];
  for (const part of candidate?.content?.parts ?? []) {
    if (typeof part.text === "string" && !part.thought) text += part.text;
    const call = part.functionCall;
    if (call) toolCalls.push({ id: call.id ?? "", name: call.name ?? "", input: call.args ?? {} });
  }
  const result: ModelResult = {
    text,
    toolCalls,
    usage: usageOf(response.usageMetadata),
    finishReason:
      toolCalls.length > 0 ? "tool_calls" : candidate ? finishReasonOf(candidate.finishReason) : "content_filter",
    provider,
    model: request.model,
    retries,
  };
  return withAnswerJson(result, request);
}

/**
 * Gemini's counts in Kiln's classes: `promptTokenCount` already includes the cached
 * `cachedContentTokenCount`; `thoughtsTokenCount` is outside `candidatesTokenCount` and billed as
 * output, so it is added to outputTokens and is their reasoning part.
 */
export function usageOf(usage: GenerateContentResponseUsageMetadata | undefined): TokenUsage {
  const thoughts = usage?.thoughtsTokenCount;
  return {
    inputTokens: usage?.promptTokenCount ?? 0,
    outputTokens: (usage?.candidatesTokenCount ?? 0) + (thoughts ?? 0),
    ...(usage?.cachedContentTokenCount !== undefined ? { cachedInputTokens: usage.cachedContentTokenCount } : {}),
    ...(thoughts !== undefined ? { reasoningTokens: thoughts } : {}),
  };
}

const FILTERED = new Set([
  "SAFETY",
  "RECITATION",
  "PROHIBITED_CONTENT",
  "BLOCKLIST",
  "SPII",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
  "IMAGE_RECITATION",
]);

export function finishReasonOf(reason: string | undefined): FinishReason {
  if (reason === "STOP" || reason === undefined) return "stop";
  if (reason === "MAX_TOKENS") return "length";
  return FILTERED.has(reason) ? "content_filter" : "other";
}
