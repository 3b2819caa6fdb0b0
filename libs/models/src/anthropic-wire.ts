/**
 * The Anthropic Messages wire: a model request as the body of POST /v1/messages, a `Message` as a
 * model result (docs/providers.md "Anthropic" has the whole mapping). System and developer
 * messages go to the top-level `system`; tool results are `tool_result` blocks of a user turn
 * (consecutive ones in one turn); a json_schema answer is asked for with structured outputs
 * (`output_config.format`), its schema brought to the subset the API takes by the SDK's own
 * `transformJSONSchema` (keywords outside it become the description, as the SDK's helpers do:
 * measured 47 µs per call for a small schema, and 45 ms once when the module loads).
 */

import { transformJSONSchema } from "@anthropic-ai/sdk/lib/transform-json-schema";
import type {
  ContentBlockParam,
  ImageBlockParam,
  Message,
  MessageCreateParamsBase,
  MessageParam,
  TextBlockParam,
  Tool,
  ToolChoice,
} from "@anthropic-ai/sdk/resources/messages";
import { ANTHROPIC_DEFAULT_MAX_TOKENS } from "./anthropic-models.js";
import type {
  ChatMessage,
  ContentPart,
  FinishReason,
  ModelRequest,
  ModelResult,
  ProviderError,
  ProviderErrorKind,
  TokenUsage,
  ToolCall,
} from "./provider.js";
import { withAnswerJson } from "./provider.js";

const EPHEMERAL = { type: "ephemeral" } as const;
const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

/** Why a request cannot be put on the wire (an image Anthropic does not take). */
export class UnsendableRequestError extends Error {
  override name = "UnsendableRequestError";
}

/** The request body; `provider` is the id whose carried reasoning is sent back. */
export function toRequestBody(request: ModelRequest, provider: string): MessageCreateParamsBase {
  const budget = request.reasoning?.budgetTokens;
  const body: MessageCreateParamsBase = {
    model: request.model,
    max_tokens: request.maxOutputTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS + (budget ?? 0),
    messages: toMessages(request.messages, provider),
  };
  const system = toSystem(request.messages);
  // Anthropic needs a user turn: a conversation without one (a prompt of system text only) opens with the system text as it.
  if (system !== undefined && !request.messages.some((m) => m.role === "user")) {
    const opening = typeof system === "string" ? [{ type: "text" as const, text: system }] : system;
    body.messages = [{ role: "user", content: opening }, ...body.messages];
  } else if (system !== undefined) body.system = system;
  if (request.onDelta) body.stream = true;
  const tools: Tool[] = (request.tools ?? []).map((t) => ({
    name: t.name,
    ...(t.description ? { description: t.description } : {}),
    input_schema: t.inputSchema as Tool["input_schema"],
  }));
  if (tools.length > 0) body.tools = tools;
  const choice = toolChoiceOf(request, tools.length);
  if (choice) body.tool_choice = choice;
  if (budget !== undefined) body.thinking = { type: "enabled", budget_tokens: budget };
  const format = request.responseFormat;
  if (request.reasoning?.effort !== undefined || format?.type === "json_schema") {
    body.output_config = {
      ...(request.reasoning?.effort !== undefined ? { effort: request.reasoning.effort } : {}),
      ...(format?.type === "json_schema"
        ? { format: { type: "json_schema", schema: strictSchemaOf(format.schema) } }
        : {}),
    };
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stop !== undefined && request.stop.length > 0) body.stop_sequences = request.stop;
  return body;
}

/** The request's tool choice, mapped (absent: the API's default, "auto"). */
function toolChoiceOf(request: ModelRequest, toolCount: number): ToolChoice | undefined {
  const wanted = request.toolChoice;
  if (toolCount === 0 || (wanted === undefined && request.parallelToolCalls !== false)) return undefined;
  const parallel = request.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  if (wanted === "none") return { type: "none" };
  if (wanted === "required") return { type: "any", ...parallel };
  if (typeof wanted === "object") return { type: "tool", name: wanted.name, ...parallel };
  return { type: "auto", ...parallel };
}

/** The schema in the subset structured outputs take; one it cannot bring there (no `type`) goes as written. */
function strictSchemaOf(schema: Record<string, unknown>): Record<string, unknown> {
  try {
    return transformJSONSchema(schema) as Record<string, unknown>;
  } catch {
    return schema;
  }
}

/** System and developer messages, in order, as the top-level system: text, or blocks when one is cached. */
function toSystem(messages: ChatMessage[]): string | TextBlockParam[] | undefined {
  const parts = messages.filter((m) => m.role === "system" || m.role === "developer");
  if (parts.length === 0) return undefined;
  if (!parts.some((m) => m.role === "system" && m.cache)) return parts.map((m) => m.content).join("\n\n");
  return parts.map((m) => ({
    type: "text",
    text: m.content,
    ...(m.role === "system" && m.cache ? { cache_control: EPHEMERAL } : {}),
  }));
}

function toMessages(messages: ChatMessage[], provider: string): MessageParam[] {
  const out: MessageParam[] = [];
  const add = (role: "user" | "assistant", content: ContentBlockParam[] | string) => {
    const last = out.at(-1);
    // Consecutive turns of one role go as one (tool results first, in their order).
    if (last?.role === role && typeof content !== "string") {
      last.content = [...blocksOf(last.content), ...content];
      return;
    }
    out.push({ role, content });
  };
  for (const m of messages) {
    switch (m.role) {
      case "system":
      case "developer":
        break;
      case "user":
        add("user", userContent(m));
        break;
      case "tool":
        add("user", [{ type: "tool_result", tool_use_id: m.toolCallId, content: m.content }]);
        break;
      case "assistant":
        add("assistant", assistantContent(m, provider));
        break;
    }
  }
  return out;
}

function blocksOf(content: MessageParam["content"]): ContentBlockParam[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

function userContent(m: Extract<ChatMessage, { role: "user" }>): ContentBlockParam[] {
  const blocks: ContentBlockParam[] = m.parts ? m.parts.map(partBlock) : [{ type: "text", text: m.content }];
  const last = blocks.at(-1);
  if (m.cache && last && last.type !== "thinking" && last.type !== "redacted_thinking") last.cache_control = EPHEMERAL;
  return blocks;
}

function partBlock(part: ContentPart): TextBlockParam | ImageBlockParam {
  if (part.type === "text") return { type: "text", text: part.text };
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(part.url);
  if (data) {
    const mediaType = (data[1] ?? "").toLowerCase();
    if (!IMAGE_TYPES.has(mediaType)) {
      throw new UnsendableRequestError(`an image of type ${mediaType} (Anthropic takes jpeg, png, gif or webp)`);
    }
    return {
      type: "image",
      source: { type: "base64", media_type: mediaType as "image/png", data: data[2] ?? "" },
    };
  }
  if (part.url.startsWith("data:")) throw new UnsendableRequestError("an image data URL that is not base64");
  return { type: "image", source: { type: "url", url: part.url } };
}

/** Carried thinking blocks first (they must precede the tool use they led to), the text, the tool calls. */
function assistantContent(
  m: Extract<ChatMessage, { role: "assistant" }>,
  provider: string,
): ContentBlockParam[] | string {
  const thinking =
    m.reasoning?.provider === provider && Array.isArray(m.reasoning.data)
      ? (m.reasoning.data as ContentBlockParam[])
      : [];
  const calls = m.toolCalls ?? [];
  if (thinking.length === 0 && calls.length === 0) return m.content;
  return [
    ...thinking,
    ...(m.content !== "" ? [{ type: "text" as const, text: m.content }] : []),
    ...calls.map((c) => ({ type: "tool_use" as const, id: c.id, name: c.name, input: c.input ?? {} })),
  ];
}

/** Anthropic's usage in the normalized classes: its `input_tokens` leaves cache reads and writes out. */
export function usageOf(usage: Partial<Message["usage"]> | undefined): TokenUsage {
  const read = usage?.cache_read_input_tokens;
  const written = usage?.cache_creation_input_tokens;
  const thinking = usage?.output_tokens_details?.thinking_tokens;
  return {
    inputTokens: (usage?.input_tokens ?? 0) + (read ?? 0) + (written ?? 0),
    outputTokens: usage?.output_tokens ?? 0,
    ...(typeof read === "number" ? { cachedInputTokens: read } : {}),
    ...(typeof written === "number" ? { cacheWriteInputTokens: written } : {}),
    ...(typeof thinking === "number" ? { reasoningTokens: thinking } : {}),
  };
}

export function toResult(
  message: Message,
  request: ModelRequest,
  provider: string,
  retries: number,
  fail: (kind: ProviderErrorKind, message: string) => ProviderError,
): ModelResult {
  if (!Array.isArray(message?.content)) throw fail("provider_error", `${provider} answered without content`);
  const toolCalls: ToolCall[] = [];
  const reasoning: unknown[] = [];
  let text = "";
  for (const block of message.content) {
    if (block.type === "text") text += block.text;
    else if (block.type === "thinking" || block.type === "redacted_thinking") reasoning.push(block);
    else if (block.type === "tool_use") toolCalls.push({ id: block.id, name: block.name, input: block.input ?? {} });
  }
  const result: ModelResult = {
    text,
    toolCalls,
    usage: usageOf(message.usage),
    finishReason: toolCalls.length > 0 ? "tool_calls" : finishReasonOf(message.stop_reason),
    provider,
    model: request.model,
    retries,
  };
  if (reasoning.length > 0) result.reasoning = { provider, data: reasoning };
  return withAnswerJson(result, request);
}

/** The stop reason of a turn without tool calls (a `tool_use` one then is "other"). */
function finishReasonOf(reason: Message["stop_reason"]): FinishReason {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "refusal":
      return "content_filter";
    default:
      return "other";
  }
}
