/**
 * An OpenAI Chat Completions request as a Kiln prompt run request (docs/openai-compatible.md
 * "Request"): every field of the request either maps onto the run or is refused with a 400 naming
 * it. Kept apart from the route so that other OpenAI-shaped routes map the same way.
 */
import { jsonText } from "@kiln/kit/json-text";
import { runMessagesOf } from "./openai-chat-messages.js";
import { badRequest } from "./openai-errors.js";
import {
  bodyOf,
  checkOptions,
  functionToolsOf,
  given,
  integer,
  isObject,
  jsonSchemaFormatOf,
  type KilnRunFields,
  type Loose,
  noObfuscation,
  number,
  toolChoiceOf,
  variablesOf,
} from "./openai-request-fields.js";

export type { KilnRunFields };

export interface ChatRequest {
  model: string;
  /** The run's fields; `variables` as an object (a skill takes them as its input). */
  run: KilnRunFields;
  variables: Record<string, unknown>;
  stream: boolean;
  includeUsage: boolean;
  /** The request's names of the run's fields, to name them in errors (see openAiParamOf). */
  maxTokensParam: "max_tokens" | "max_completion_tokens";
}

/** Request fields a prompt run honours and a skill run cannot. */
export const PROMPT_ONLY_FIELDS = [
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "response_format",
  "temperature",
  "top_p",
  "frequency_penalty",
  "presence_penalty",
  "max_tokens",
  "max_completion_tokens",
  "stop",
  "seed",
] as const;

/** Fields read below; any other field given (not null) is refused by name. */
const READ = new Set<string>([
  "model",
  "messages",
  "variables",
  "metadata",
  "stream",
  "stream_options",
  ...PROMPT_ONLY_FIELDS,
  "n",
  "logprobs",
  "store",
  "modalities",
]);

/** Why a field is refused, where there is more to say than "not supported". */
const REFUSED: Record<string, string> = {
  functions: "legacy `functions` are not supported: send them as `tools`",
  function_call: "legacy `function_call` is not supported: send `tool_choice`",
  audio: "audio output is not supported",
  user: "`user` is not supported: Kiln records the API key that made the run",
};

/** Chat Completions' tools: `{type: "function", function: {name, description?, parameters?, strict?}}`. */
const toolsOf = (tools: unknown) =>
  functionToolsOf(tools, (tool, at) => (isObject(tool.function) ? [tool.function, `${at}.function`] : undefined));

const chatToolChoiceOf = (choice: unknown) =>
  toolChoiceOf(choice, (c) => (isObject(c.function) ? [c.function.name, "tool_choice.function.name"] : undefined));

function responseFormatOf(format: unknown): KilnRunFields["responseFormat"] {
  if (!given(format)) return undefined;
  if (!isObject(format)) throw badRequest("response_format must be an object", "response_format");
  if (format.type === "text" || format.type === "json_object") return jsonText({ type: format.type });
  if (format.type === "json_schema" && isObject(format.json_schema)) {
    return jsonSchemaFormatOf(format.json_schema, "response_format.json_schema");
  }
  throw badRequest('response_format.type must be "text", "json_object" or "json_schema"', "response_format.type");
}

function stopOf(stop: unknown): string[] {
  if (!given(stop)) return [];
  const list = typeof stop === "string" ? [stop] : stop;
  if (!Array.isArray(list) || !list.every((s) => typeof s === "string")) {
    throw badRequest("stop must be a string or an array of strings", "stop");
  }
  return list;
}

function parametersOf(body: Loose): KilnRunFields["parameters"] {
  if (given(body.max_tokens) && given(body.max_completion_tokens)) {
    throw badRequest("send max_completion_tokens or max_tokens, not both", "max_tokens");
  }
  const maxOutputTokens = integer(body, "max_completion_tokens") ?? integer(body, "max_tokens");
  const seed = integer(body, "seed");
  const parallel = body.parallel_tool_calls;
  if (given(parallel) && typeof parallel !== "boolean") {
    throw badRequest("parallel_tool_calls must be a boolean", "parallel_tool_calls");
  }
  return {
    temperature: number(body, "temperature"),
    topP: number(body, "top_p"),
    frequencyPenalty: number(body, "frequency_penalty"),
    presencePenalty: number(body, "presence_penalty"),
    maxOutputTokens,
    stop: stopOf(body.stop),
    seed: seed === undefined ? undefined : BigInt(seed),
    parallelToolCalls: typeof parallel === "boolean" ? parallel : undefined,
  };
}

/** Fields whose only supported value is OpenAI's default: the default passes, anything else is a 400. */
function checkDefaults(body: Loose): void {
  if (given(body.n) && body.n !== 1) throw badRequest("only n: 1 is supported (one choice per run)", "n");
  if (given(body.logprobs) && body.logprobs !== false) throw badRequest("logprobs are not supported", "logprobs");
  // Kiln stores every run (GET /api/runs/:id): store: false cannot be honoured.
  if (body.store === false) throw badRequest("Kiln stores every run: store: false is not supported", "store");
  const modalities = body.modalities;
  if (given(modalities) && !(Array.isArray(modalities) && modalities.every((m) => m === "text"))) {
    throw badRequest('only the "text" modality is supported', "modalities");
  }
  checkOptions(body, "stream_options", (key, value) => key === "include_usage" || noObfuscation(key, value));
}

/** The Chat Completions body as a prompt run; 400 (OpenAI's shape, `param` the field) for what Kiln cannot honour. */
export function chatRequestOf(raw: unknown): ChatRequest {
  const body = bodyOf(raw, READ, REFUSED, "Chat Completions");
  checkDefaults(body);
  const variables = variablesOf(body);
  return {
    model: String(body.model),
    variables,
    run: {
      variables: jsonText(variables),
      messages: runMessagesOf(body.messages),
      tools: toolsOf(body.tools),
      toolChoice: chatToolChoiceOf(body.tool_choice),
      responseFormat: responseFormatOf(body.response_format),
      parameters: parametersOf(body),
    },
    stream: body.stream === true,
    includeUsage: isObject(body.stream_options) && body.stream_options.include_usage === true,
    maxTokensParam: given(body.max_tokens) ? "max_tokens" : "max_completion_tokens",
  };
}

const PARAMS: [RegExp, string | ((m: RegExpMatchArray, r: ChatRequest) => string)][] = [
  [
    /^messages\[(\d+)\]\.toolCalls\[(\d+)\]\.arguments$/,
    (m) => `messages[${m[1]}].tool_calls[${m[2]}].function.arguments`,
  ],
  [/^messages\[(\d+)\]\.toolCalls(.*)$/, (m) => `messages[${m[1]}].tool_calls${m[2]}`],
  [/^messages\[(\d+)\]\.toolCallId$/, (m) => `messages[${m[1]}].tool_call_id`],
  [/^messages\[(\d+)\]\.parts\[(\d+)\]\.(url|detail)$/, (m) => `messages[${m[1]}].content[${m[2]}].image_url.${m[3]}`],
  [/^messages\[(\d+)\]\.parts(.*)$/, (m) => `messages[${m[1]}].content${m[2]}`],
  [/^tools\[(\d+)\]\.(name|description|parameters)$/, (m) => `tools[${m[1]}].function.${m[2]}`],
  [/^toolChoice.*$/, "tool_choice"],
  [/^responseFormat.*$/, "response_format"],
  [/^parameters\.maxOutputTokens$/, (_m, r) => r.maxTokensParam],
  [/^parameters\.topP$/, "top_p"],
  [/^parameters\.frequencyPenalty$/, "frequency_penalty"],
  [/^parameters\.presencePenalty$/, "presence_penalty"],
  [/^parameters\.parallelToolCalls$/, "parallel_tool_calls"],
  [/^parameters\.(\w+)$/, (m) => m[1] ?? "parameters"],
];

/** The OpenAI request's name of a field the run request named (`parameters.topP` is `top_p`). */
export function openAiParamOf(field: string, request: ChatRequest): string {
  for (const [pattern, to] of PARAMS) {
    const m = field.match(pattern);
    if (m) return typeof to === "string" ? to : to(m, request);
  }
  return field;
}
