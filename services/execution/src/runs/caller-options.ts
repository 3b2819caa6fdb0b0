/**
 * What the caller of a prompt run sets besides its variables and messages (RunPromptRequest
 * `tools`, `toolChoice`, `responseFormat`, `parameters`): parsed at the boundary, checked against
 * the version (a caller tool named like one of its tools, a response format other than its own:
 * 400 naming the field), and turned into what each model turn is sent.
 */
import { isDeepStrictEqual } from "node:util";
import { type FieldIssue, invalidArgument } from "@kiln/kit/errors";
import { type JsonText, readJsonText } from "@kiln/kit/json-text";
import type { ModelRequest, ResponseFormat, ToolChoice, ToolDefinition } from "@kiln/models/provider";
import type { RunnablePrompt } from "./runnable.js";

/** The request fields this module reads, as the proto carries them. */
export interface CallerFields {
  tools?: readonly { name: string; description: string; parameters?: JsonText }[];
  toolChoice?: { mode: string; name: string };
  responseFormat?: JsonText;
  parameters?: {
    temperature?: number;
    maxOutputTokens?: number;
    stop: readonly string[];
    seed?: bigint;
    topP?: number;
    frequencyPenalty?: number;
    presencePenalty?: number;
    parallelToolCalls?: boolean;
  };
}

export type SamplingSettings = Pick<
  ModelRequest,
  | "temperature"
  | "maxOutputTokens"
  | "stop"
  | "seed"
  | "topP"
  | "frequencyPenalty"
  | "presencePenalty"
  | "parallelToolCalls"
>;

export interface CallerOptions {
  /** Tools the model may call that Kiln does not run: a call to one ends the run. */
  tools: ToolDefinition[];
  /** For the first model turn; later turns are "auto". */
  toolChoice?: ToolChoice;
  /** The caller's format; undefined: the version's. */
  responseFormat?: ResponseFormat;
  sampling: SamplingSettings;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const fail = (message: string, field: string, issue: string): never => {
  throw invalidArgument(message, [{ field, issue }]);
};

function objectOf(text: JsonText | undefined, field: string): Record<string, unknown> | undefined {
  const read = readJsonText(text);
  if (!read.ok) return fail(`${field} ${read.issue}`, field, read.issue);
  if (read.value === undefined) return undefined;
  if (typeof read.value !== "object" || read.value === null || Array.isArray(read.value)) {
    return fail(`${field} must be an object`, field, "must be an object");
  }
  return read.value as Record<string, unknown>;
}

function toolsOf(tools: CallerFields["tools"]): ToolDefinition[] {
  const seen = new Set<string>();
  return (tools ?? []).map((t, i) => {
    if (!TOOL_NAME.test(t.name))
      fail("a tool has an invalid name", `tools[${i}].name`, "must match ^[a-zA-Z0-9_-]{1,64}$");
    if (seen.has(t.name)) fail("two tools have the same name", `tools[${i}].name`, "is used twice");
    seen.add(t.name);
    return {
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      inputSchema: objectOf(t.parameters, `tools[${i}].parameters`) ?? { type: "object" },
    };
  });
}

function toolChoiceOf(choice: CallerFields["toolChoice"], tools: ToolDefinition[]): ToolChoice | undefined {
  switch (choice?.mode ?? "") {
    case "":
      return undefined;
    case "auto":
    case "none":
    case "required":
      return choice?.mode as ToolChoice;
    case "tool": {
      const name = choice?.name ?? "";
      if (!tools.some((t) => t.name === name))
        fail("toolChoice names no offered tool", "toolChoice.name", "is not in tools");
      return { name };
    }
    default:
      return fail("toolChoice has an unknown mode", "toolChoice.mode", 'must be "auto", "none", "required" or "tool"');
  }
}

function responseFormatOf(text: JsonText | undefined): ResponseFormat | undefined {
  const rf = objectOf(text, "responseFormat");
  if (!rf) return undefined;
  if (rf.type === "text") return { type: "text" };
  if (rf.type === "json_object") return { type: "json_object" };
  if (rf.type === "json_schema") {
    const schema = rf.schema;
    if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
      return fail("responseFormat.schema must be a JSON Schema object", "responseFormat.schema", "must be an object");
    }
    const name = typeof rf.name === "string" && rf.name !== "" ? rf.name : "response";
    return { type: "json_schema", name, schema: schema as Record<string, unknown> };
  }
  return fail(
    "responseFormat has an unknown type",
    "responseFormat.type",
    'must be "text", "json_object" or "json_schema"',
  );
}

function samplingOf(p: CallerFields["parameters"]): SamplingSettings {
  if (!p) return {};
  const issues: FieldIssue[] = [];
  const range = (value: number | undefined, field: string, min: number, max: number) => {
    if (value !== undefined && !(value >= min && value <= max))
      issues.push({ field: `parameters.${field}`, issue: `must be between ${min} and ${max}` });
  };
  range(p.temperature, "temperature", 0, 2);
  range(p.topP, "topP", 0, 1);
  range(p.frequencyPenalty, "frequencyPenalty", -2, 2);
  range(p.presencePenalty, "presencePenalty", -2, 2);
  if (p.maxOutputTokens !== undefined && p.maxOutputTokens < 1)
    issues.push({ field: "parameters.maxOutputTokens", issue: "must be at least 1" });
  if (p.stop.length > 4) issues.push({ field: "parameters.stop", issue: "must hold at most 4 sequences" });
  if (issues.length > 0) throw invalidArgument("the sampling parameters are out of range", issues);
  const settings: SamplingSettings = {};
  if (p.temperature !== undefined) settings.temperature = p.temperature;
  if (p.maxOutputTokens !== undefined) settings.maxOutputTokens = p.maxOutputTokens;
  if (p.stop.length > 0) settings.stop = [...p.stop];
  if (p.seed !== undefined) settings.seed = Number(p.seed);
  if (p.topP !== undefined) settings.topP = p.topP;
  if (p.frequencyPenalty !== undefined) settings.frequencyPenalty = p.frequencyPenalty;
  if (p.presencePenalty !== undefined) settings.presencePenalty = p.presencePenalty;
  if (p.parallelToolCalls !== undefined) settings.parallelToolCalls = p.parallelToolCalls;
  return settings;
}

/** The caller's fields parsed; 400 naming the field when one is malformed. */
export function parseCallerOptions(req: CallerFields): CallerOptions {
  const tools = toolsOf(req.tools);
  const toolChoice = toolChoiceOf(req.toolChoice, tools);
  const responseFormat = responseFormatOf(req.responseFormat);
  return {
    tools,
    ...(toolChoice !== undefined ? { toolChoice } : {}),
    ...(responseFormat !== undefined ? { responseFormat } : {}),
    sampling: samplingOf(req.parameters),
  };
}

/**
 * The caller's options checked against the version, and the response format the run uses: the
 * version's own, the caller's when the version has none, 400 when the caller's differs from the
 * version's (or a caller tool has the name of one of the version's tools).
 */
export function checkAgainstVersion(prompt: RunnablePrompt, caller: CallerOptions): ResponseFormat {
  const keys = new Set(prompt.tools.map((t) => t.toolKey));
  caller.tools.forEach((t, i) => {
    if (keys.has(t.name))
      fail("a tool is named like one of the prompt's tools", `tools[${i}].name`, "is a tool of the prompt");
  });
  const own = prompt.responseFormat;
  const asked = caller.responseFormat;
  if (asked === undefined || asked.type === "text") {
    if (asked?.type === "text" && own.type !== "text") {
      fail(
        "the prompt answers in its own JSON schema, not text",
        "responseFormat",
        "conflicts with the prompt's response format",
      );
    }
    return own;
  }
  if (own.type === "text") return asked;
  if (asked.type === "json_schema" && own.type === "json_schema" && isDeepStrictEqual(asked.schema, own.schema))
    return own;
  return fail(
    "the prompt has its own response format: send none, or the prompt's own schema",
    "responseFormat",
    "conflicts with the prompt's response format",
  );
}
