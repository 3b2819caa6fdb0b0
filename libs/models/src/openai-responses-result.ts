/**
 * The answer of OpenAI's Responses API as a model result (docs/providers.md "OpenAI's Responses
 * API"): the text of the `message` items' `output_text` parts (a refusal when there is no text),
 * the `function_call` items as tool calls by their `call_id` (what the tool result answers),
 * `reasoning` items left out of the text (their tokens are in the usage), the finish reason from
 * `status` and `incomplete_details`, and the usage by the one OpenAI mapping (openai-wire.ts
 * `openAIUsage`): `input_tokens` includes the cached ones, `output_tokens` the reasoning ones.
 */
import type { Response } from "openai/resources/responses/responses";
import { safeExcerpt } from "./openai-retry.js";
import { openAIUsage } from "./openai-wire.js";
import type { FinishReason, ModelRequest, ModelResult, ToolCall } from "./provider.js";
import { withAnswerJson } from "./provider.js";
import type { Fail } from "./remote-call.js";

/** What of a `Response` is read (the SDK's `output_text` is its own, not on the wire). */
export type ResponsesAnswer = Pick<Response, "output"> &
  Partial<Pick<Response, "status" | "incomplete_details" | "usage" | "error">>;

export function toResponsesResult(
  answer: ResponsesAnswer,
  request: ModelRequest,
  provider: string,
  retries: number,
  fail: Fail,
): ModelResult {
  if (answer.status === "failed") {
    const error = answer.error;
    const said = error ? `${error.code}: ${error.message}` : "no reason given";
    throw fail("provider_error", `${provider} answered a failed response: ${safeExcerpt(said)}`);
  }
  if (!Array.isArray(answer.output)) throw fail("provider_error", `${provider} answered without an output`);
  let text = "";
  let refusal = "";
  const toolCalls: ToolCall[] = [];
  for (const item of answer.output) {
    if (item.type === "message") {
      for (const part of item.content ?? []) {
        if (part.type === "output_text") text += part.text;
        else if (part.type === "refusal") refusal += part.refusal;
      }
    } else if (item.type === "function_call") {
      toolCalls.push({
        id: item.call_id,
        name: item.name,
        input: argumentsOf(item.name, item.arguments, provider, fail),
      });
    }
  }
  const usage = answer.usage;
  const result: ModelResult = {
    text: text !== "" ? text : refusal,
    toolCalls,
    usage: openAIUsage({
      input: usage?.input_tokens,
      output: usage?.output_tokens,
      cached: usage?.input_tokens_details?.cached_tokens,
      cacheWrite: usage?.input_tokens_details?.cache_write_tokens,
      reasoning: usage?.output_tokens_details?.reasoning_tokens,
    }),
    finishReason: toolCalls.length > 0 ? "tool_calls" : finishReasonOf(answer),
    provider,
    model: request.model,
    retries,
  };
  return withAnswerJson(result, request);
}

function argumentsOf(name: string, args: string, provider: string, fail: Fail): unknown {
  try {
    return args.trim() === "" ? {} : JSON.parse(args);
  } catch {
    throw fail("provider_error", `${provider} called tool "${name}" with arguments that are not JSON`);
  }
}

function finishReasonOf(answer: ResponsesAnswer): FinishReason {
  if (answer.status === undefined || answer.status === "completed") return "stop";
  if (answer.status !== "incomplete") return "other";
  switch (answer.incomplete_details?.reason) {
    case "max_output_tokens":
      return "length";
    case "content_filter":
      return "content_filter";
    default:
      return "other";
  }
}
