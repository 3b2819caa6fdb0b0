/**
 * A stored Kiln run as a Chat Completions answer (docs/openai-compatible.md "Response"): the
 * completion, or the chunks of a stream, with the run's usage and cost; a failed run as the error
 * a retry would only duplicate.
 */
import type { Run } from "@kiln/proto/execution";
import { OpenAiHttpError } from "./openai-errors.js";

/** The response header carrying the run's estimated cost in USD (absent when the model has no price). */
export const COST_HEADER = "x-kiln-cost-usd";

interface RunOutput {
  text: string;
  json?: unknown;
  toolCalls?: { id: string; name: string; input: unknown }[];
  finishReason?: "length" | "content_filter";
}

export interface ChatAnswer {
  content: string | null;
  toolCalls: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  finishReason: "stop" | "tool_calls" | "length" | "content_filter";
  usage: ChatUsage;
  created: number;
}

/**
 * Chat Completions' usage with Kiln's cost: as OpenAI counts them, `prompt_tokens` includes the
 * `cached_tokens` and `completion_tokens` the `reasoning_tokens`; a detail is there when the
 * run's provider reported it (docs/openai-compatible.md "Response").
 */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
  cost_usd: number | null;
}

const seconds = (t: { seconds: bigint } | undefined) => (t ? Number(t.seconds) : Math.floor(Date.now() / 1000));

/**
 * A failed run (stored already): 502, or 504 for a provider timeout, with `x-should-retry: false`
 * (the OpenAI SDKs then do not retry) and the same hint in the body: a retry runs, and stores, again.
 */
export function failedRunError(run: Run): OpenAiHttpError {
  const status = run.error?.code === "provider_timeout" ? 504 : 502;
  return new OpenAiHttpError(
    status,
    {
      error: {
        message: `run ${run.id} failed: ${run.error?.message ?? "no output"} (the failed run is stored; a retry runs again)`,
        type: "api_error",
        param: null,
        code: run.error?.code ?? null,
        kiln_run_id: run.id,
        should_retry: false,
      },
    },
    { "x-should-retry": "false" },
  );
}

/** A succeeded run's answer. */
export function chatAnswerOf(run: Run): ChatAnswer {
  const output = JSON.parse(run.output?.json ?? '{"text":""}') as RunOutput;
  const toolCalls = (output.toolCalls ?? []).map((c) => ({
    id: c.id,
    type: "function" as const,
    function: { name: c.name, arguments: JSON.stringify(c.input ?? {}) },
  }));
  const text = output.json !== undefined && toolCalls.length === 0 ? JSON.stringify(output.json) : output.text;
  const inputTokens = Number(run.usage?.inputTokens ?? 0n);
  const outputTokens = Number(run.usage?.outputTokens ?? 0n);
  const cached = run.usage?.cachedInputTokens;
  const reasoning = run.usage?.reasoningTokens;
  return {
    content: toolCalls.length > 0 && text === "" ? null : text,
    toolCalls,
    finishReason: toolCalls.length > 0 ? "tool_calls" : (output.finishReason ?? "stop"),
    usage: {
      prompt_tokens: inputTokens,
      completion_tokens: outputTokens,
      total_tokens: inputTokens + outputTokens,
      ...(cached !== undefined ? { prompt_tokens_details: { cached_tokens: Number(cached) } } : {}),
      ...(reasoning !== undefined ? { completion_tokens_details: { reasoning_tokens: Number(reasoning) } } : {}),
      cost_usd: run.estimatedCostUsd ?? null,
    },
    created: seconds(run.createdAt),
  };
}

/** The `chat.completion` object. */
export function completionOf(run: Run, model: string, answer: ChatAnswer) {
  const message = {
    role: "assistant",
    content: answer.content,
    refusal: null,
    ...(answer.toolCalls.length > 0 ? { tool_calls: answer.toolCalls } : {}),
  };
  return {
    id: run.id,
    object: "chat.completion",
    created: answer.created,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finishReason }],
    usage: answer.usage,
  };
}

/** What every chunk of one answer shares. */
export interface ChunkHead {
  id: string;
  created: number;
  model: string;
  includeUsage: boolean;
}

/** One `chat.completion.chunk` with one choice (`usage: null` when usage was asked for, as OpenAI sends it). */
export function chunkOf(head: ChunkHead, delta: Record<string, unknown>, finish: string | null) {
  return {
    id: head.id,
    object: "chat.completion.chunk",
    created: head.created,
    model: head.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(head.includeUsage ? { usage: null } : {}),
  };
}

/** The last chunk when usage was asked for: no choice, the run's usage and cost. */
export function usageChunkOf(head: ChunkHead, usage: ChatAnswer["usage"]) {
  return { id: head.id, object: "chat.completion.chunk", created: head.created, model: head.model, choices: [], usage };
}

/**
 * The `chat.completion.chunk` events of a completed run: a role chunk, content chunks, the tool
 * calls, the finish chunk, and the usage chunk when asked for.
 */
export function chunksOf(run: Run, model: string, answer: ChatAnswer, includeUsage: boolean): unknown[] {
  const head = { id: run.id, created: answer.created, model, includeUsage };
  const events: unknown[] = [chunkOf(head, { role: "assistant", content: "" }, null)];
  for (const piece of answer.content?.match(/[\s\S]{1,16}/g) ?? [])
    events.push(chunkOf(head, { content: piece }, null));
  if (answer.toolCalls.length > 0) {
    events.push(chunkOf(head, { tool_calls: answer.toolCalls.map((call, index) => ({ index, ...call })) }, null));
  }
  events.push(chunkOf(head, {}, answer.finishReason));
  if (includeUsage) events.push(usageChunkOf(head, answer.usage));
  return events;
}
