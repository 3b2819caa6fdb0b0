/** The Chat Completions wire: a model request as the request body, the answer as a model result. */

import type {
  ChatCompletion,
  ChatCompletionCreateParams,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import type { AzureOpenAIOptions } from "./openai-endpoint.js";
import type { OpenAIApi } from "./openai-responses-models.js";
import type {
  ChatMessage,
  FinishReason,
  ModelRequest,
  ModelResult,
  ProviderError,
  ProviderErrorKind,
  RemoteProviderOptions,
  TokenUsage,
  ToolCall,
} from "./provider.js";
import { withAnswerJson } from "./provider.js";

export interface OpenAIProviderOptions extends RemoteProviderOptions {
  /** false: send developer messages with role "system", for endpoints without the developer role. */
  developerRole?: boolean;
  /** Where maxOutputTokens goes; older compatible servers know only "max_tokens". */
  maxTokensParam?: "max_completion_tokens" | "max_tokens";
  /** Azure OpenAI: deployment URLs, `api-version` and the `api-key` header (openai-endpoint.ts). */
  azure?: AzureOpenAIOptions;
  /** The API of each model name that says one (`api` of its configuration); others: `responsesTable`, else Chat Completions. */
  apis?: Readonly<Record<string, OpenAIApi>>;
  /** Whether OpenAI's Responses-only models go to the Responses API untold (openai-responses-models.ts); default true, false for compatible endpoints. */
  responsesTable?: boolean;
}

/** The request body; a streaming turn (`onDelta`) asks for the stream and its usage chunk. */
export function toRequestBody(request: ModelRequest, options: OpenAIProviderOptions): ChatCompletionCreateParams {
  const developerRole = options.developerRole ?? true;
  const body: ChatCompletionCreateParams = {
    model: request.model,
    messages: request.messages.map((m) => toMessageParam(m, developerRole)),
    ...(request.onDelta ? { stream: true, stream_options: { include_usage: true } } : {}),
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
  if (request.responseFormat?.type === "json_object") body.response_format = { type: "json_object" };
  if (request.toolChoice !== undefined && body.tools) {
    body.tool_choice =
      typeof request.toolChoice === "string"
        ? request.toolChoice
        : { type: "function", function: { name: request.toolChoice.name } };
  }
  if (request.parallelToolCalls !== undefined && body.tools) body.parallel_tool_calls = request.parallelToolCalls;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.frequencyPenalty !== undefined) body.frequency_penalty = request.frequencyPenalty;
  if (request.presencePenalty !== undefined) body.presence_penalty = request.presencePenalty;
  if (request.stop !== undefined && request.stop.length > 0) body.stop = request.stop;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.maxOutputTokens !== undefined) {
    body[options.maxTokensParam ?? "max_completion_tokens"] = request.maxOutputTokens;
  }
  return body;
}

function toMessageParam(message: ChatMessage, developerRole: boolean): ChatCompletionMessageParam {
  switch (message.role) {
    case "system":
      return { role: message.role, content: message.content };
    case "user":
      if (!message.parts) return { role: "user", content: message.content };
      return {
        role: "user",
        content: message.parts.map((p) =>
          p.type === "text"
            ? { type: "text", text: p.text }
            : { type: "image_url", image_url: { url: p.url, ...(p.detail ? { detail: p.detail } : {}) } },
        ),
      };
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

export function toResult(
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
    usage: usageOf(completion.usage),
    finishReason: toolCalls.length > 0 ? "tool_calls" : finishReasonOf(choice.finish_reason),
    provider,
    model: request.model,
    retries,
  };
  return withAnswerJson(result, request);
}

/**
 * OpenAI's usage as TokenUsage: `prompt_tokens` already includes `prompt_tokens_details.cached_tokens`
 * and `completion_tokens` includes `completion_tokens_details.reasoning_tokens`, so the totals carry
 * over as they are and the details become the parts; a detail the answer lacks stays absent.
 */
export function usageOf(usage: ChatCompletion["usage"]): TokenUsage {
  return openAIUsage({
    input: usage?.prompt_tokens,
    output: usage?.completion_tokens,
    cached: usage?.prompt_tokens_details?.cached_tokens,
    cacheWrite: usage?.prompt_tokens_details?.cache_write_tokens,
    reasoning: usage?.completion_tokens_details?.reasoning_tokens,
  });
}

/**
 * The one mapping of OpenAI's counts, for Chat Completions (`prompt_tokens`…) and the Responses API
 * (`input_tokens`, `input_tokens_details.cached_tokens` and `.cache_write_tokens`, `output_tokens`,
 * `output_tokens_details.reasoning_tokens`), whose totals include their details alike. A detail
 * the answer lacks stays absent.
 */
export function openAIUsage(counts: {
  input: number | undefined;
  output: number | undefined;
  cached: number | null | undefined;
  cacheWrite?: number | null | undefined;
  reasoning: number | null | undefined;
}): TokenUsage {
  const { cached, cacheWrite, reasoning } = counts;
  return {
    inputTokens: counts.input ?? 0,
    outputTokens: counts.output ?? 0,
    ...(typeof cached === "number" ? { cachedInputTokens: cached } : {}),
    ...(typeof cacheWrite === "number" ? { cacheWriteInputTokens: cacheWrite } : {}),
    ...(typeof reasoning === "number" ? { reasoningTokens: reasoning } : {}),
  };
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

/** OpenAI accepts `^[a-zA-Z0-9_-]{1,64}$` as a response format name. */
export function schemaName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
  return cleaned === "" ? "response" : cleaned;
}
