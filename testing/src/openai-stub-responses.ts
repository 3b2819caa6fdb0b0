/**
 * The OpenAI stub's Responses API (`POST /v1/responses`, openai-stub.ts): a scripted reply as the
 * `Response` OpenAI answers, typed by the pinned `openai` SDK's own types so that a field of the
 * wrong name or shape fails to compile: a `reasoning` item first when the usage counts reasoning
 * tokens, then the `message` with its `output_text` (or a `function_call` item per tool call,
 * `call_id` and JSON `arguments`), `status` `completed` or `incomplete` (`length` →
 * `max_output_tokens`, `content_filter`), and the usage in the Responses shape (`input_tokens`
 * including `input_tokens_details.cached_tokens`, `output_tokens` including
 * `output_tokens_details.reasoning_tokens`). A `failed` reply is a response of status `failed`.
 */
import type {
  Response,
  ResponseFunctionToolCall,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseUsage,
} from "openai/resources/responses/responses";
import type { StubResponse, StubUsage } from "./openai-stub-replies.js";
import { wordsOf } from "./stub-http.js";

/** A Response as it goes on the wire (`output_text` is the SDK's own convenience, computed client-side). */
export type WireResponse = Omit<Response, "output_text">;

type Answer = Extract<StubResponse, { type: "completion" | "failed" }>;

/** The ids of one answer's items: `resp_…`, `msg_…`, `fc_…`, `rs_…`. */
export function idsOf(n: number) {
  return { response: `resp_stub_${n}`, message: `msg_stub_${n}`, reasoning: `rs_stub_${n}`, call: `fc_stub_${n}` };
}

/** The text of the last user message of a Responses request's `input` (a string, or its `input_text` parts). */
// biome-ignore lint/suspicious/noExplicitAny: the body is whatever the client sent.
export function lastUserInput(body: any): string {
  const input: unknown = body?.input;
  if (typeof input === "string") return input;
  if (!Array.isArray(input)) return "";
  const last = input.filter((item: { role?: string }) => item?.role === "user").at(-1) as { content?: unknown };
  if (typeof last?.content === "string") return last.content;
  if (!Array.isArray(last?.content)) return "";
  return last.content
    .filter((p: { type?: string }) => p?.type === "input_text")
    .map((p: { text?: string }) => p.text ?? "")
    .join("");
}

/** The scripted usage (Chat Completions' names) in the Responses shape, with its details always present, as OpenAI sends them. */
export function responsesUsageOf(usage: StubUsage): ResponseUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: {
      cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
      cache_write_tokens: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
  };
}

/** The output items of a completion reply, in the order OpenAI puts them. */
export function outputItemsOf(reply: Extract<Answer, { type: "completion" }>, n: number): ResponseOutputItem[] {
  const ids = idsOf(n);
  const items: ResponseOutputItem[] = [];
  if ((reply.usage?.completion_tokens_details?.reasoning_tokens ?? 0) > 0) {
    const reasoning: ResponseReasoningItem = { id: ids.reasoning, type: "reasoning", summary: [] };
    items.push(reasoning);
  }
  if (reply.content !== null && reply.content !== "") {
    const message: ResponseOutputMessage = {
      id: ids.message,
      type: "message",
      role: "assistant",
      status: reply.finishReason === "stop" || reply.finishReason === "tool_calls" ? "completed" : "incomplete",
      content: [{ type: "output_text", text: reply.content, annotations: [], logprobs: [] }],
    };
    items.push(message);
  }
  (reply.toolCalls ?? []).forEach((c, i) => {
    const call: ResponseFunctionToolCall = {
      id: `${ids.call}_${i + 1}`,
      type: "function_call",
      status: "completed",
      call_id: c.id ?? `call_stub_${i + 1}`,
      name: c.name,
      arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
    };
    items.push(call);
  });
  return items;
}

/** What the Response says of the request it answers: its settings echoed, as OpenAI does. */
// biome-ignore lint/suspicious/noExplicitAny: the body is whatever the client sent.
export function responseShell(body: any, n: number, at: number): WireResponse {
  return {
    id: idsOf(n).response,
    object: "response",
    created_at: at,
    status: "in_progress",
    background: false,
    error: null,
    incomplete_details: null,
    instructions: typeof body?.instructions === "string" ? body.instructions : null,
    max_output_tokens: typeof body?.max_output_tokens === "number" ? body.max_output_tokens : null,
    metadata: {},
    model: typeof body?.model === "string" ? body.model : "stub",
    output: [],
    parallel_tool_calls: body?.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: body?.reasoning?.effort ?? null, summary: null },
    service_tier: "default",
    temperature: typeof body?.temperature === "number" ? body.temperature : 1,
    text: body?.text ?? { format: { type: "text" } },
    tool_choice: body?.tool_choice ?? "auto",
    tools: Array.isArray(body?.tools) ? body.tools : [],
    top_p: typeof body?.top_p === "number" ? body.top_p : 1,
    truncation: "disabled",
  };
}

/** The finished Response of a reply: completed, incomplete (with its reason) or failed. */
// biome-ignore lint/suspicious/noExplicitAny: the body is whatever the client sent.
export function finishedResponse(reply: Answer, body: any, n: number, at: number): WireResponse {
  const shell = responseShell(body, n, at);
  if (reply.type === "failed") {
    return { ...shell, status: "failed", error: { code: reply.code, message: reply.message } };
  }
  const usage = reply.usage ?? {
    prompt_tokens: wordsOf(JSON.stringify(body?.input ?? "")),
    completion_tokens: wordsOf(reply.content ?? "") + (reply.toolCalls?.length ?? 0),
  };
  const reason =
    reply.finishReason === "length"
      ? ("max_output_tokens" as const)
      : reply.finishReason === "content_filter"
        ? ("content_filter" as const)
        : undefined;
  return {
    ...shell,
    status: reason ? "incomplete" : "completed",
    incomplete_details: reason ? { reason } : null,
    output: outputItemsOf({ ...reply, usage }, n),
    usage: responsesUsageOf(usage),
  };
}
