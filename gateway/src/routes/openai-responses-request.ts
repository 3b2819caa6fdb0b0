/**
 * An OpenAI Responses request (`POST /v1/responses`) as a Kiln prompt run request
 * (docs/openai-compatible.md "Responses API"): every field either maps onto the run, as Chat
 * Completions' does (openai-request-fields.ts), or is refused with a 400 naming it.
 */
import { jsonText } from "@kiln/kit/json-text";
import { badRequest } from "./openai-errors.js";
import type { ModelRunCall } from "./openai-model-run.js";
import * as fields from "./openai-request-fields.js";
import { type MessageSource, responsesInputOf } from "./openai-responses-input.js";

export interface ResponsesRequest extends ModelRunCall {
  stream: boolean;
}

/** Request fields a prompt run honours and a skill run cannot. */
const PROMPT_ONLY_FIELDS = [
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "text",
  "temperature",
  "top_p",
  "max_output_tokens",
] as const;

/** Fields read below; any other field given (not null) is refused by name. */
const READ = new Set<string>([
  "model",
  "input",
  "instructions",
  "variables",
  "metadata",
  "stream",
  "stream_options",
  "store",
  "include",
  "truncation",
  "reasoning",
  "background",
  ...PROMPT_ONLY_FIELDS,
]);

/** Why a field is refused, where there is more to say than "not supported". */
const REFUSED: Record<string, string> = {
  previous_response_id:
    "`previous_response_id` is not supported: Kiln keeps no conversation state, send the earlier items in `input`",
  conversation: "`conversation` is not supported: Kiln keeps no conversation state, send the items in `input`",
  prompt: "`prompt` is not supported: name the Kiln prompt in `model` (kiln/<prompt>) and send `variables`",
  user: "`user` is not supported: Kiln records the API key that made the run",
  safety_identifier: "`safety_identifier` is not supported: Kiln records the API key that made the run",
};

/** Responses' tools, flattened: `{type: "function", name, description?, parameters?, strict?}`. */
const toolsOf = (tools: unknown) => fields.functionToolsOf(tools, (tool, at) => [tool, at]);

const responsesToolChoiceOf = (choice: unknown) => fields.toolChoiceOf(choice, (c) => [c.name, "tool_choice.name"]);

/** `text`: its `format` (text, json_object, json_schema); `verbosity` is a 400. */
function responseFormatOf(text: unknown): fields.KilnRunFields["responseFormat"] {
  if (!fields.given(text)) return undefined;
  if (!fields.isObject(text)) throw badRequest("text must be an object", "text");
  for (const [key, value] of Object.entries(text)) {
    if (key !== "format" && fields.given(value)) throw badRequest(`text.${key} is not supported`, `text.${key}`);
  }
  const format = text.format;
  if (!fields.given(format)) return undefined;
  if (!fields.isObject(format)) throw badRequest("text.format must be an object", "text.format");
  if (format.type === "text" || format.type === "json_object") return jsonText({ type: format.type });
  if (format.type === "json_schema") {
    if (fields.given(format.description)) {
      throw badRequest("text.format.description is not supported", "text.format.description");
    }
    // `strict` is accepted either way: the provider is asked in non-strict mode (any JSON Schema works).
    if (fields.given(format.strict) && typeof format.strict !== "boolean") {
      throw badRequest("text.format.strict must be a boolean", "text.format.strict");
    }
    return fields.jsonSchemaFormatOf(format, "text.format");
  }
  throw badRequest('text.format.type must be "text", "json_object" or "json_schema"', "text.format.type");
}

function parametersOf(body: fields.Loose): fields.KilnRunFields["parameters"] {
  const parallel = body.parallel_tool_calls;
  if (fields.given(parallel) && typeof parallel !== "boolean") {
    throw badRequest("parallel_tool_calls must be a boolean", "parallel_tool_calls");
  }
  return {
    temperature: fields.number(body, "temperature"),
    topP: fields.number(body, "top_p"),
    maxOutputTokens: fields.integer(body, "max_output_tokens"),
    parallelToolCalls: typeof parallel === "boolean" ? parallel : undefined,
  };
}

/** Fields whose only supported value is OpenAI's default (or means nothing more in Kiln): anything else is a 400. */
function checkDefaults(body: fields.Loose): void {
  // Kiln stores every run either way (GET /api/runs/:id); `store` only says whether OpenAI keeps
  // the response for previous_response_id, which Kiln does not offer: both values are accepted.
  if (fields.given(body.store) && typeof body.store !== "boolean") throw badRequest("store must be a boolean", "store");
  if (body.background === true) throw badRequest("background responses are not supported", "background");
  const include = body.include;
  if (fields.given(include) && !(Array.isArray(include) && include.length === 0)) {
    throw badRequest("include is not supported: Kiln answers no extra output data", "include");
  }
  if (fields.given(body.truncation) && body.truncation !== "disabled") {
    throw badRequest('only truncation: "disabled" is supported', "truncation");
  }
  fields.checkOptions(body, "reasoning", fields.noObfuscation);
  fields.checkOptions(body, "stream_options", fields.noObfuscation);
}

/** The Responses body as a prompt run; 400 (OpenAI's shape, `param` the field) for what Kiln cannot honour. */
export function responsesRequestOf(raw: unknown): ResponsesRequest {
  const body = fields.bodyOf(raw, READ, REFUSED, "Responses API");
  checkDefaults(body);
  const variables = fields.variablesOf(body);
  const { messages, sources } = responsesInputOf(body.instructions, body.input);
  const sent = (v: unknown) => fields.given(v) && !(Array.isArray(v) && v.length === 0);
  return {
    model: String(body.model),
    run: {
      variables: jsonText(variables),
      messages,
      tools: toolsOf(body.tools),
      toolChoice: responsesToolChoiceOf(body.tool_choice),
      responseFormat: responseFormatOf(body.text),
      parameters: parametersOf(body),
    },
    messagesField: fields.given(body.instructions) && body.instructions !== "" ? "instructions" : "input",
    promptOnlyField: PROMPT_ONLY_FIELDS.find((f) => sent(body[f])),
    paramOf: (field) => responsesParamOf(field, sources, typeof body.input === "string"),
    stream: body.stream === true,
  };
}

/** The Responses request's name of a field the run request named (`messages[2].toolCallId` is `input[1].call_id`). */
function responsesParamOf(field: string, sources: MessageSource[], stringInput: boolean): string {
  const setting = fields.settingParamOf(field, { responseFormat: "text.format" });
  if (setting !== undefined) return setting;
  const m = field.match(/^messages\[(\d+)\](?:\.toolCalls\[(\d+)\](\.arguments)?|\.(toolCallId))?/);
  const source = m ? sources[Number(m[1])] : undefined;
  if (!m || !source) return field;
  if (source.item < 0) return "instructions";
  if (stringInput) return "input";
  if (m[2] !== undefined) return `input[${source.calls[Number(m[2])] ?? source.item}]${m[3] ?? ""}`;
  return `input[${source.item}]${m[4] ? ".call_id" : ""}`;
}
