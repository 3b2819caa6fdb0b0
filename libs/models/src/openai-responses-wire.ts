/**
 * The request of OpenAI's Responses API (`POST /responses`; docs/providers.md "OpenAI's Responses
 * API"), typed by the pinned `openai` SDK: each turn whole in itself (`store: false`, no
 * `previous_response_id`: Kiln keeps the conversation and the run), the messages as `input` items
 * in their order (system and developer ones as role messages, which the API reads as
 * `instructions` would be), a tool call as a `function_call` item and its result as a
 * `function_call_output` with the same `call_id`, functions and JSON Schema answers non-strict (any
 * schema passes, as on Chat Completions), a reasoning budget as the effort it comes nearest to.
 */
import type {
  FunctionTool,
  ResponseCreateParamsBase,
  ResponseInputItem,
  ResponseInputMessageContentList,
} from "openai/resources/responses/responses";
import type { ReasoningEffort } from "openai/resources/shared";
import { schemaName } from "./openai-wire.js";
import type { ChatMessage, ContentPart, ModelRequest } from "./provider.js";

export interface ResponsesBodyOptions {
  /** The body's `model`: the model name, or on Azure its deployment. */
  model: string;
  /** false: developer messages go with role "system" (an endpoint without the developer role). */
  developerRole: boolean;
  /** false: temperature and top_p are left out (OpenAI's reasoning models refuse them). */
  sampling: boolean;
}

/** The inverse of the Gemini and Bedrock effort budgets (1024, 8192, 24576 tokens). */
function effortOfBudget(budget: number): ReasoningEffort {
  if (budget <= 1024) return "low";
  return budget <= 8192 ? "medium" : "high";
}

export function toResponsesBody(request: ModelRequest, options: ResponsesBodyOptions): ResponseCreateParamsBase {
  const body: ResponseCreateParamsBase = {
    model: options.model,
    input: request.messages.flatMap((m) => toInputItems(m, options.developerRole)),
    store: false,
    ...(request.onDelta ? { stream: true } : {}),
  };
  const tools: FunctionTool[] = (request.tools ?? []).map((t) => ({
    type: "function",
    name: t.name,
    ...(t.description ? { description: t.description } : {}),
    parameters: t.inputSchema,
    // The API's default is strict, which refuses schemas without additionalProperties: false everywhere.
    strict: false,
  }));
  if (tools.length > 0) {
    body.tools = tools;
    if (request.toolChoice !== undefined) {
      body.tool_choice =
        typeof request.toolChoice === "string"
          ? request.toolChoice
          : { type: "function", name: request.toolChoice.name };
    }
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  }
  const format = request.responseFormat;
  if (format?.type === "json_schema") {
    body.text = {
      format: { type: "json_schema", name: schemaName(format.name), schema: format.schema, strict: false },
    };
  } else if (format?.type === "json_object") body.text = { format: { type: "json_object" } };
  if (request.maxOutputTokens !== undefined) body.max_output_tokens = request.maxOutputTokens;
  if (options.sampling && request.temperature !== undefined) body.temperature = request.temperature;
  if (options.sampling && request.topP !== undefined) body.top_p = request.topP;
  const { reasoning } = request;
  const effort = reasoning?.effort ?? (reasoning?.budgetTokens !== undefined && effortOfBudget(reasoning.budgetTokens));
  if (effort) body.reasoning = { effort };
  return body;
}

function toInputItems(message: ChatMessage, developerRole: boolean): ResponseInputItem[] {
  switch (message.role) {
    case "system":
      return [{ role: "system", content: message.content }];
    case "developer":
      return [{ role: developerRole ? "developer" : "system", content: message.content }];
    case "user":
      return [{ role: "user", content: message.parts ? toContentList(message.parts) : message.content }];
    case "assistant": {
      const said: ResponseInputItem[] = message.content !== "" ? [{ role: "assistant", content: message.content }] : [];
      // The calls go back without the items' ids: an id would ask for the reasoning item that preceded it.
      const calls = (message.toolCalls ?? []).map(
        (c): ResponseInputItem => ({
          type: "function_call",
          call_id: c.id,
          name: c.name,
          arguments: JSON.stringify(c.input ?? {}),
        }),
      );
      return [...said, ...calls];
    }
    case "tool":
      return [{ type: "function_call_output", call_id: message.toolCallId, output: message.content }];
  }
}

function toContentList(parts: ContentPart[]): ResponseInputMessageContentList {
  return parts.map((p) =>
    p.type === "text"
      ? { type: "input_text", text: p.text }
      : { type: "input_image", image_url: p.url, detail: p.detail ?? "auto" },
  );
}
