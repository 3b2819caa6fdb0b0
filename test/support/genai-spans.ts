/** Spans of every shape the GenAI mapping reads (docs/observability.md "Mapping"), made by the real OTel SDK. */
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { memoryTracer } from "./trace-modes.js";

export const SYSTEM = [{ type: "text", content: "Answer briefly." }];
export const INPUT = [{ role: "user", parts: [{ type: "text", content: "Weather in Paris?" }] }];
export const OUTPUT = [
  {
    role: "assistant",
    parts: [{ type: "tool_call", id: "call_1", name: "get_weather", arguments: { city: "Paris" } }],
    finish_reason: "tool_call",
  },
];
export const TOOLS = [{ type: "function", name: "get_weather", parameters: { type: "object" } }];
/**
 * The cost at Kiln's OpenAI list prices (docs/providers.md "How usage is priced"): `cached` of the
 * input tokens at the cached-input price, the rest (cache writes included: OpenAI has no write
 * price) at the input price, the output (reasoning included) at the output price.
 */
export const price = (model: "gpt-4o" | "gpt-4o-mini", input: number, output: number, cached = 0) =>
  model === "gpt-4o"
    ? ((input - cached) * 2.5 + cached * 1.25 + output * 10) / 1e6
    : ((input - cached) * 0.15 + cached * 0.075 + output * 0.6) / 1e6;

/** One trace holding a span of each shape the mapping reads. */
export function makeSpans(session: string) {
  const { provider, memory } = memoryTracer("genai-app");
  const tracer = provider.getTracer("genai-test");
  const root = tracer.startSpan("invoke_agent planner", { attributes: { "gen_ai.conversation.id": session } });
  const inRoot = trace.setSpan(context.active(), root);
  const span = (name: string, attributes: Record<string, string | number | string[]>) =>
    tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, inRoot);
  span("chat gpt-4o", {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o",
    "gen_ai.response.model": "gpt-4o-2024-08-06",
    "gen_ai.request.temperature": 0.2,
    "gen_ai.request.max_tokens": 200,
    "gen_ai.request.top_p": 0.9,
    "gen_ai.request.stop_sequences": ["END"],
    "gen_ai.request.seed": 7,
    "gen_ai.response.id": "chatcmpl-1",
    "gen_ai.response.finish_reasons": ["tool_call"],
    "gen_ai.usage.input_tokens": 100,
    "gen_ai.usage.output_tokens": 20,
    "gen_ai.usage.cache_read.input_tokens": 40,
    "gen_ai.usage.cache_creation.input_tokens": 10,
    "gen_ai.system_instructions": JSON.stringify(SYSTEM),
    "gen_ai.input.messages": JSON.stringify(INPUT),
    "gen_ai.output.messages": JSON.stringify(OUTPUT),
    "gen_ai.tool.definitions": JSON.stringify(TOOLS),
  }).end();
  span("execute_tool get_weather", {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "get_weather",
    "gen_ai.tool.call.id": "call_1",
    "gen_ai.tool.type": "function",
    "gen_ai.tool.call.arguments": '{"city":"Paris"}',
    "gen_ai.tool.call.result": '{"temp":21}',
  }).end();
  const events = span("chat events", { "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini" });
  events.addEvent("gen_ai.system.message", { "gen_ai.system": "openai", content: "Be brief." });
  events.addEvent("gen_ai.user.message", { "gen_ai.system": "openai", content: "Hi" });
  events.addEvent("gen_ai.choice", { "gen_ai.system": "openai", index: 0, finish_reason: "stop", content: "Hello" });
  events.end();
  const details = span("chat details", { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai" });
  details.addEvent("gen_ai.client.inference.operation.details", {
    "gen_ai.request.model": "gpt-4o-mini",
    "gen_ai.input.messages": JSON.stringify(INPUT),
  });
  details.end();
  const failed = span("chat failed", {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o",
    "error.type": "timeout",
  });
  failed.setStatus({ code: SpanStatusCode.ERROR, message: "timed out" });
  failed.end();
  span("ChatOpenAI", {
    "openinference.span.kind": "LLM",
    "llm.model_name": "gpt-4o-mini",
    "llm.provider": "openai",
    "llm.system": "openai",
    "llm.input_messages.0.message.role": "system",
    "llm.input_messages.0.message.content": "Be brief.",
    "llm.input_messages.1.message.role": "user",
    "llm.input_messages.1.message.contents.0.message_content.type": "text",
    "llm.input_messages.1.message.contents.0.message_content.text": "Weather in Oslo?",
    "llm.output_messages.0.message.role": "assistant",
    "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_9",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"city":"Oslo"}',
    "llm.token_count.prompt": 30,
    "llm.token_count.completion": 10,
    "llm.token_count.total": 40,
    "llm.token_count.prompt_details.cache_read": 5,
    "llm.token_count.prompt_details.cache_write": 3,
    "llm.token_count.completion_details.reasoning": 2,
    "llm.invocation_parameters": '{"temperature":0}',
    "llm.tools.0.tool.json_schema": '{"name":"get_weather"}',
    "session.id": session,
  }).end();
  span("get_weather", {
    "openinference.span.kind": "TOOL",
    "tool.name": "get_weather",
    "tool_call.id": "call_9",
    "input.value": '{"city":"Oslo"}',
    "output.value": "cold",
  }).end();
  root.end();
  return memory.getFinishedSpans();
}
