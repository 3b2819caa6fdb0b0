/**
 * The one mapping table from span attributes to a generation or a tool call (docs/observability.md
 * "Mapping" lists the same rows). Each field reads its sources in order; the first one present wins.
 * Conventions: the OpenTelemetry GenAI semantic conventions (current and older), OpenInference and
 * the Vercel AI SDK's `experimental_telemetry`. `<N>` is an index, `<field>` any key below it.
 */

/** How a source's value is read (genai-readers.ts). */
export type Reader =
  | "text"
  | "count"
  | "number"
  | "json"
  | "messages"
  | "indexedMessages"
  | "textAsAssistant"
  | "strings"
  | "provider"
  | "operation"
  | "parameters"
  | "toolCalls"
  | "traceloopTool";

export type Convention = "GenAI" | "GenAI (older)" | "OpenInference" | "Vercel AI SDK" | "OpenLLMetry" | "Langfuse";

export interface Source {
  /** The attribute, or for indexed readers its prefix (`gen_ai.prompt` reads `gen_ai.prompt.<N>.<field>`). */
  key: string;
  read: Reader;
  convention: Convention;
}

const genai = (key: string, read: Reader): Source => ({ key, read, convention: "GenAI" });
const older = (key: string, read: Reader): Source => ({ key, read, convention: "GenAI (older)" });
const oi = (key: string, read: Reader): Source => ({ key, read, convention: "OpenInference" });
const vercel = (key: string, read: Reader): Source => ({ key, read, convention: "Vercel AI SDK" });
const traceloop = (key: string, read: Reader): Source => ({ key, read, convention: "OpenLLMetry" });
const langfuse = (key: string, read: Reader): Source => ({ key, read, convention: "Langfuse" });

/** The generation's fields and where each comes from. */
export const GENERATION_TABLE = {
  operation: [
    genai("gen_ai.operation.name", "text"),
    oi("openinference.span.kind", "operation"),
    vercel("ai.operationId", "operation"),
  ],
  requestModel: [
    genai("gen_ai.request.model", "text"),
    oi("llm.model_name", "text"),
    oi("embedding.model_name", "text"),
    vercel("ai.model.id", "text"),
  ],
  responseModel: [genai("gen_ai.response.model", "text"), vercel("ai.response.model", "text")],
  provider: [
    genai("gen_ai.provider.name", "provider"),
    older("gen_ai.system", "provider"),
    oi("llm.provider", "provider"),
    oi("llm.system", "provider"),
    vercel("ai.model.provider", "provider"),
  ],
  inputTokens: [
    genai("gen_ai.usage.input_tokens", "count"),
    older("gen_ai.usage.prompt_tokens", "count"),
    oi("llm.token_count.prompt", "count"),
    vercel("ai.usage.inputTokens", "count"),
    vercel("ai.usage.promptTokens", "count"),
  ],
  outputTokens: [
    genai("gen_ai.usage.output_tokens", "count"),
    older("gen_ai.usage.completion_tokens", "count"),
    oi("llm.token_count.completion", "count"),
    vercel("ai.usage.outputTokens", "count"),
    vercel("ai.usage.completionTokens", "count"),
  ],
  cacheReadInputTokens: [
    genai("gen_ai.usage.cache_read.input_tokens", "count"),
    oi("llm.token_count.prompt_details.cache_read", "count"),
    vercel("ai.usage.inputTokenDetails.cacheReadTokens", "count"),
    vercel("ai.usage.cachedInputTokens", "count"),
  ],
  cacheCreationInputTokens: [
    genai("gen_ai.usage.cache_creation.input_tokens", "count"),
    oi("llm.token_count.prompt_details.cache_write", "count"),
    vercel("ai.usage.inputTokenDetails.cacheWriteTokens", "count"),
  ],
  reasoningTokens: [
    genai("gen_ai.usage.reasoning.output_tokens", "count"),
    oi("llm.token_count.completion_details.reasoning", "count"),
    vercel("ai.usage.outputTokenDetails.reasoningTokens", "count"),
    vercel("ai.usage.reasoningTokens", "count"),
  ],
  systemInstructions: [genai("gen_ai.system_instructions", "messages")],
  inputMessages: [
    genai("gen_ai.input.messages", "messages"),
    older("gen_ai.prompt", "indexedMessages"),
    oi("llm.input_messages", "indexedMessages"),
    vercel("ai.prompt.messages", "messages"),
  ],
  outputMessages: [
    genai("gen_ai.output.messages", "messages"),
    older("gen_ai.completion", "indexedMessages"),
    oi("llm.output_messages", "indexedMessages"),
    vercel("ai.response.text", "textAsAssistant"),
  ],
  toolCalls: [vercel("ai.response.toolCalls", "toolCalls")],
  toolDefinitions: [
    genai("gen_ai.tool.definitions", "json"),
    oi("llm.tools", "indexedMessages"),
    vercel("ai.prompt.tools", "json"),
  ],
  parameters: [genai("gen_ai.request", "parameters"), oi("llm.invocation_parameters", "json")],
  responseId: [genai("gen_ai.response.id", "text"), vercel("ai.response.id", "text")],
  finishReasons: [
    genai("gen_ai.response.finish_reasons", "strings"),
    oi("llm.finish_reasons", "strings"),
    oi("llm.finish_reason", "strings"),
    vercel("ai.response.finishReason", "strings"),
  ],
  errorType: [genai("error.type", "text")],
  timeToFirstChunkMs: [vercel("ai.response.msToFirstChunk", "number")],
} as const satisfies Record<string, readonly Source[]>;

/** A tool execution span's call. */
export const TOOL_CALL_TABLE = {
  name: [
    genai("gen_ai.tool.name", "text"),
    oi("tool.name", "text"),
    vercel("ai.toolCall.name", "text"),
    traceloop("traceloop.entity.name", "traceloopTool"),
  ],
  id: [genai("gen_ai.tool.call.id", "text"), oi("tool_call.id", "text"), vercel("ai.toolCall.id", "text")],
  type: [genai("gen_ai.tool.type", "text")],
  arguments: [
    genai("gen_ai.tool.call.arguments", "json"),
    vercel("ai.toolCall.args", "json"),
    oi("input.value", "json"),
    traceloop("traceloop.entity.input", "json"),
  ],
  result: [
    genai("gen_ai.tool.call.result", "json"),
    vercel("ai.toolCall.result", "json"),
    oi("output.value", "json"),
    traceloop("traceloop.entity.output", "json"),
  ],
} as const satisfies Record<string, readonly Source[]>;

/** Value tables for the `operation` reader: OpenInference span kinds and AI SDK operation ids as GenAI operations. */
export const OPERATIONS: Record<string, string> = {
  LLM: "chat",
  EMBEDDING: "embeddings",
  TOOL: "execute_tool",
  AGENT: "invoke_agent",
  "ai.generateText.doGenerate": "chat",
  "ai.streamText.doStream": "chat",
  "ai.generateObject.doGenerate": "chat",
  "ai.streamObject.doStream": "chat",
  "ai.embed.doEmbed": "embeddings",
  "ai.embedMany.doEmbed": "embeddings",
  "ai.toolCall": "execute_tool",
};

/** A span is a generation when it names a model (first three rows of requestModel, first of responseModel) or its operation is one of these. */
export const MODEL_OPERATIONS = new Set(["chat", "text_completion", "generate_content", "embeddings"]);

/**
 * Operations whose span wraps model calls and sums their usage (the AI SDK 7's root `invoke_agent`
 * carries its model, tokens and messages): never a model call, or the trace would count each call twice.
 */
export const AGGREGATE_OPERATIONS = new Set(["invoke_agent", "create_agent", "invoke_workflow", "agent_step"]);

/**
 * Span events of the older event-based GenAI messages: the event's name gives the role (or says it
 * is a choice), its attributes the message's fields. `gen_ai.client.inference.operation.details`
 * carries the current attributes (`gen_ai.input.messages`, ...) on an event instead of the span.
 */
export const MESSAGE_EVENTS: Record<string, { side: "input" | "output"; role: string }> = {
  "gen_ai.system.message": { side: "input", role: "system" },
  "gen_ai.user.message": { side: "input", role: "user" },
  "gen_ai.assistant.message": { side: "input", role: "assistant" },
  "gen_ai.tool.message": { side: "input", role: "tool" },
  "gen_ai.choice": { side: "output", role: "assistant" },
};
export const DETAILS_EVENT = "gen_ai.client.inference.operation.details";

/**
 * What a span says about its trace: the session it belongs to and the end user it served (the
 * summary takes the first span, in start order, that has one). `user.id` and `enduser.id` are the
 * general OpenTelemetry attributes (in the GenAI column), `user.id` is also OpenInference's.
 */
export const TRACE_TABLE = {
  sessionId: [
    genai("session.id", "text"),
    genai("gen_ai.conversation.id", "text"),
    oi("session.id", "text"),
    vercel("ai.telemetry.metadata.sessionId", "text"),
    vercel("ai.settings.context.sessionId", "text"),
    traceloop("traceloop.association.properties.session_id", "text"),
    traceloop("traceloop.association.properties.sessionId", "text"),
    langfuse("langfuse.session.id", "text"),
  ],
  userId: [
    genai("user.id", "text"),
    genai("enduser.id", "text"),
    oi("user.id", "text"),
    vercel("ai.telemetry.metadata.userId", "text"),
    vercel("ai.settings.context.userId", "text"),
    traceloop("traceloop.association.properties.user_id", "text"),
    traceloop("traceloop.association.properties.userId", "text"),
    langfuse("langfuse.user.id", "text"),
  ],
} as const satisfies Record<string, readonly Source[]>;
