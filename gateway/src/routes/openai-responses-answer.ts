/**
 * A stored Kiln run as a Responses API `response` object (docs/openai-compatible.md "Responses
 * API"): the run's answer read as Chat Completions reads it (`chatAnswerOf`), laid out as output
 * items (a `message` with its `output_text`, a `function_call` per call to the caller's tools) with
 * the usage in the Responses names and Kiln's cost.
 */
import type { Run } from "@kiln/proto/execution";
import { type ChatAnswer, chatAnswerOf } from "./openai-chat-answer.js";

export interface TextPart {
  type: "output_text";
  text: string;
  annotations: never[];
  logprobs: never[];
}

export interface MessageItem {
  type: "message";
  id: string;
  status: "in_progress" | "completed";
  role: "assistant";
  content: TextPart[];
}

export interface FunctionCallItem {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: "in_progress" | "completed";
}

export type OutputItem = MessageItem | FunctionCallItem;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  /** Kiln's: the run's estimated cost in USD, null when a model without a price took part. */
  cost_usd: number | null;
}

/** The output item ids: a run answers one message; a function call's item id derives from its call id. */
export const messageItemId = (run: { id: string }) => `msg_${run.id}`;
export const functionCallItemId = (callId: string) => `fc_${callId}`;

export const textPart = (text: string): TextPart => ({ type: "output_text", text, annotations: [], logprobs: [] });

export const messageItem = (run: { id: string }, text: string | undefined): MessageItem => ({
  type: "message",
  id: messageItemId(run),
  status: text === undefined ? "in_progress" : "completed",
  role: "assistant",
  content: text === undefined ? [] : [textPart(text)],
});

export const functionCallItem = (
  call: { id: string; name: string; arguments: string },
  status: FunctionCallItem["status"],
): FunctionCallItem => ({
  type: "function_call",
  id: functionCallItemId(call.id),
  call_id: call.id,
  name: call.name,
  arguments: status === "completed" ? call.arguments : "",
  status,
});

/** The fields every `response` object carries, as the run stands (`created_at` in seconds). */
export function responseBase(run: Pick<Run, "id" | "createdAt">, model: string) {
  const created = run.createdAt ? Number(run.createdAt.seconds) : Math.floor(Date.now() / 1000);
  return { id: run.id, object: "response" as const, created_at: created, model, error: null, incomplete_details: null };
}

export function usageOf(answer: ChatAnswer): ResponsesUsage {
  const { prompt_tokens, completion_tokens, total_tokens, cost_usd } = answer.usage;
  // The Responses API always carries both details: 0 when the provider reported none.
  return {
    input_tokens: prompt_tokens,
    input_tokens_details: { cached_tokens: answer.usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: completion_tokens,
    output_tokens_details: { reasoning_tokens: answer.usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens,
    cost_usd,
  };
}

/** A succeeded run's output items: its text as a message (unless it only called tools), then its calls. */
export function outputItemsOf(run: Run, answer: ChatAnswer): OutputItem[] {
  const calls = answer.toolCalls.map((c) =>
    functionCallItem({ id: c.id, name: c.function.name, arguments: c.function.arguments }, "completed"),
  );
  return answer.content === null ? calls : [messageItem(run, answer.content), ...calls];
}

/** The `response` object of a succeeded run. */
export function responseOf(run: Run, model: string) {
  const answer = chatAnswerOf(run);
  const incomplete = answer.finishReason === "length" || answer.finishReason === "content_filter";
  return {
    ...responseBase(run, model),
    status: incomplete ? ("incomplete" as const) : ("completed" as const),
    incomplete_details: incomplete
      ? { reason: answer.finishReason === "length" ? "max_output_tokens" : "content_filter" }
      : null,
    output: outputItemsOf(run, answer),
    usage: usageOf(answer),
  };
}
