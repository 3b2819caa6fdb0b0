/**
 * An Anthropic Messages request (`POST /v1/messages`) as a Kiln prompt or skill run
 * (docs/anthropic-compatible.md "Request"): the same run as the OpenAI-compatible routes
 * (`ModelRunCall`, the shared readers of openai-request-fields.ts), every field either mapped onto
 * it or refused with a 400 naming it. The messages are read in anthropic-messages-input.ts.
 */
import { jsonText } from "@kiln/kit/json-text";
import { messagesInputOf, messagesParamOf } from "./anthropic-messages-input.js";
import { badRequest } from "./openai-errors.js";
import type { ModelRunCall } from "./openai-model-run.js";
import * as fields from "./openai-request-fields.js";

export interface MessagesRequest extends ModelRunCall {
  stream: boolean;
}

/** Request fields a prompt run honours and a skill run cannot. */
const PROMPT_ONLY_FIELDS = ["tools", "tool_choice", "temperature", "top_p", "stop_sequences", "output_config"] as const;

/**
 * Fields read below; any other field given (not null) is refused by name. `max_tokens` is required
 * by Anthropic, so every client sends it: a prompt's output limit, accepted and not used by a skill.
 * `thinking` and `service_tier` are accepted and not used: a prompt's model and settings are its own.
 */
const READ = new Set<string>([
  "model",
  "messages",
  "system",
  "max_tokens",
  "metadata",
  "variables",
  "stream",
  "thinking",
  "service_tier",
  ...PROMPT_ONLY_FIELDS,
]);

/** Why a field is refused, where there is more to say than "not supported". */
const REFUSED: Record<string, string> = {
  top_k: "`top_k` is not supported: send temperature or top_p",
  container: "`container` is not supported: Kiln runs its own tools",
  mcp_servers: "`mcp_servers` is not supported: attach the tools to the Kiln prompt",
};

/** Anthropic's metadata key Kiln does not use (the run records the API key that made it). */
const IGNORED_METADATA = ["user_id"];

const TOOL_FIELDS = new Set(["type", "name", "description", "input_schema", "cache_control"]);

/** Client tools (`{name, description?, input_schema}`, `type: "custom"` or none); server tools are a 400. */
function toolsOf(tools: unknown): fields.CallerTool[] {
  if (!fields.given(tools)) return [];
  if (!Array.isArray(tools)) throw badRequest("tools must be an array", "tools");
  return tools.map((tool: unknown, i) => {
    const at = `tools[${i}]`;
    if (!fields.isObject(tool)) throw badRequest("a tool must be an object", at);
    if (fields.given(tool.type) && tool.type !== "custom") {
      throw badRequest("only client tools (name, description, input_schema) are supported", `${at}.type`);
    }
    for (const [key, value] of Object.entries(tool)) {
      if (!TOOL_FIELDS.has(key) && fields.given(value)) {
        throw badRequest(`a tool's \`${key}\` is not supported`, `${at}.${key}`);
      }
    }
    if (!fields.isObject(tool.input_schema)) {
      throw badRequest("a tool needs its input_schema (a JSON Schema object)", `${at}.input_schema`);
    }
    return fields.functionToolOf({ name: tool.name, description: tool.description, parameters: tool.input_schema }, at);
  });
}

/** `tool_choice` (`auto`, `any`, `tool` with its name, `none`) and whether it turns parallel calls off. */
function toolChoiceOf(choice: unknown): { toolChoice: fields.KilnRunFields["toolChoice"]; parallel?: boolean } {
  if (!fields.given(choice)) return { toolChoice: undefined };
  if (!fields.isObject(choice)) throw badRequest("tool_choice must be an object", "tool_choice");
  const disable = choice.disable_parallel_tool_use;
  if (fields.given(disable) && typeof disable !== "boolean") {
    throw badRequest(
      "tool_choice.disable_parallel_tool_use must be a boolean",
      "tool_choice.disable_parallel_tool_use",
    );
  }
  const parallel = disable === true ? false : undefined;
  switch (choice.type) {
    case "auto":
      return { toolChoice: { mode: "auto", name: "" }, parallel };
    case "any":
      return { toolChoice: { mode: "required", name: "" }, parallel };
    case "none":
      return { toolChoice: { mode: "none", name: "" } };
    case "tool":
      if (typeof choice.name !== "string" || choice.name === "") {
        throw badRequest("tool_choice needs the tool's name", "tool_choice.name");
      }
      return { toolChoice: { mode: "tool", name: choice.name }, parallel };
    default:
      throw badRequest('tool_choice.type must be "auto", "any", "tool" or "none"', "tool_choice.type");
  }
}

/** `output_config.format`: a JSON schema the answer follows (`effort` is accepted and not used). */
function responseFormatOf(config: unknown): fields.KilnRunFields["responseFormat"] {
  if (!fields.given(config)) return undefined;
  fields.checkOptions({ output_config: config }, "output_config", (key) => key === "format" || key === "effort");
  if (!fields.isObject(config)) return undefined;
  const format = config.format;
  if (!fields.given(format)) return undefined;
  if (!fields.isObject(format) || format.type !== "json_schema") {
    throw badRequest('output_config.format.type must be "json_schema"', "output_config.format.type");
  }
  return fields.jsonSchemaFormatOf(format, "output_config.format");
}

function stopSequencesOf(stop: unknown): string[] {
  if (!fields.given(stop)) return [];
  if (!Array.isArray(stop) || !stop.every((s) => typeof s === "string")) {
    throw badRequest("stop_sequences must be an array of strings", "stop_sequences");
  }
  return stop;
}

/** Fields accepted and not used: checked for their shape only. */
function checkAccepted(body: fields.Loose): void {
  const thinking = body.thinking;
  if (fields.given(thinking) && !(fields.isObject(thinking) && typeof thinking.type === "string")) {
    throw badRequest("thinking must be an object with its type", "thinking");
  }
  if (fields.given(body.service_tier) && typeof body.service_tier !== "string") {
    throw badRequest("service_tier must be text", "service_tier");
  }
  if (fields.given(body.stream) && typeof body.stream !== "boolean")
    throw badRequest("stream must be a boolean", "stream");
  const max = fields.integer(body, "max_tokens");
  if (max !== undefined && max < 1) throw badRequest("max_tokens must be at least 1", "max_tokens");
}

/** Where the Messages request keeps the run's settings, where the run's name does not say it. */
const SETTING_NAMES = {
  responseFormat: "output_config.format",
  maxOutputTokens: "max_tokens",
  stop: "stop_sequences",
  parallelToolCalls: "tool_choice.disable_parallel_tool_use",
};

/** The Messages body as a prompt or skill run; 400 (`param` the field) for what Kiln cannot honour. */
export function messagesRequestOf(raw: unknown): MessagesRequest {
  const body = fields.bodyOf(raw, READ, REFUSED, "Messages API");
  checkAccepted(body);
  const variables = fields.variablesOf(body, IGNORED_METADATA);
  const { messages, sources } = messagesInputOf(body.system, body.messages);
  const { toolChoice, parallel } = toolChoiceOf(body.tool_choice);
  const run: fields.KilnRunFields = {
    messages,
    tools: toolsOf(body.tools),
    toolChoice,
    responseFormat: responseFormatOf(body.output_config),
    parameters: {
      temperature: fields.number(body, "temperature"),
      topP: fields.number(body, "top_p"),
      maxOutputTokens: fields.integer(body, "max_tokens"),
      stop: stopSequencesOf(body.stop_sequences),
      parallelToolCalls: parallel,
    },
    variables: jsonText(variables),
  };
  const sent = (f: (typeof PROMPT_ONLY_FIELDS)[number]) =>
    f === "output_config"
      ? fields.isObject(body.output_config) && fields.given(body.output_config.format)
      : fields.given(body[f]) && !(Array.isArray(body[f]) && body[f].length === 0);
  return {
    model: String(body.model),
    run,
    messagesField: sources[0]?.message === -1 ? "system" : "messages",
    promptOnlyField: PROMPT_ONLY_FIELDS.find(sent),
    paramOf: (field) =>
      fields.settingParamOf(field, SETTING_NAMES) ??
      messagesParamOf(field, sources) ??
      field.replace(/^(tools\[\d+\])\.parameters$/, "$1.input_schema"),
    stream: body.stream === true,
  };
}
