/**
 * Request fields that Chat Completions and Responses (docs/openai-compatible.md) share: the
 * variables (`variables` or `metadata.variables`), a function tool's definition, a JSON schema
 * response format and numbers, each read into the prompt run request or refused with a 400 naming
 * it. The two routes name the same things at different places (`tools[i].function.name` against
 * `tools[i].name`), so each reader takes where the value sits (`at`).
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { jsonText } from "@kiln/kit/json-text";
import type { RunPromptRequestSchema } from "@kiln/proto/execution";
import { badRequest } from "./openai-errors.js";

/** What a prompt run takes from the caller, besides the organization and the prompt. */
export type KilnRunFields = Pick<
  MessageInitShape<typeof RunPromptRequestSchema>,
  "variables" | "messages" | "tools" | "toolChoice" | "responseFormat" | "parameters"
>;

export type CallerTool = NonNullable<KilnRunFields["tools"]>[number];

export type Loose = Record<string, unknown>;

export const isObject = (v: unknown): v is Loose => typeof v === "object" && v !== null && !Array.isArray(v);
/** Sent: neither absent nor null (a field sent as null counts as not sent). */
export const given = (v: unknown) => v !== undefined && v !== null;

export const number = (body: Loose, key: string): number | undefined => {
  const value = body[key];
  if (!given(value)) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) throw badRequest(`${key} must be a number`, key);
  return value;
};

export const integer = (body: Loose, key: string): number | undefined => {
  const value = number(body, key);
  if (value !== undefined && !Number.isSafeInteger(value)) throw badRequest(`${key} must be an integer`, key);
  return value;
};

/**
 * The variables: the top-level `variables` object, or `metadata.variables` (an object or its JSON
 * text). An empty `metadata` (what stock clients send by default) carries none; any other metadata
 * key is a 400 unless `ignoredMetadata` names it (a key the API defines that means nothing to Kiln).
 */
export function variablesOf(body: Loose, ignoredMetadata: readonly string[] = []): Record<string, unknown> {
  const metadata = body.metadata;
  let fromMetadata: unknown;
  if (given(metadata)) {
    if (!isObject(metadata)) throw badRequest("metadata must be an object", "metadata");
    for (const [key, value] of Object.entries(metadata)) {
      if (key !== "variables" && !ignoredMetadata.includes(key) && given(value)) {
        throw badRequest(`metadata.${key} is not supported: metadata carries only \`variables\``, `metadata.${key}`);
      }
    }
    fromMetadata = metadata.variables;
  }
  if (given(fromMetadata)) {
    // OpenAI's metadata values are strings: the variables may come as their JSON text.
    if (typeof fromMetadata === "string") {
      try {
        fromMetadata = JSON.parse(fromMetadata);
      } catch {
        throw badRequest("metadata.variables must be a JSON object (or its JSON text)", "metadata.variables");
      }
    }
    if (!isObject(fromMetadata)) {
      throw badRequest("metadata.variables must be a JSON object (or its JSON text)", "metadata.variables");
    }
  } else fromMetadata = undefined;
  if (given(body.variables)) {
    if (!isObject(body.variables)) throw badRequest("variables must be an object", "variables");
    if (fromMetadata !== undefined) {
      throw badRequest("send the variables in `variables` or in `metadata.variables`, not both", "metadata.variables");
    }
    return body.variables;
  }
  return (fromMetadata as Record<string, unknown> | undefined) ?? {};
}

/** A function tool's `{name, description, parameters, strict}`, found at `at` in the request. */
export function functionToolOf(fn: Loose, at: string): CallerTool {
  const { name, description, parameters, strict } = fn;
  if (typeof name !== "string") throw badRequest("a tool needs its function name", `${at}.name`);
  if (given(description) && typeof description !== "string") {
    throw badRequest("a tool's description must be text", `${at}.description`);
  }
  if (given(parameters) && !isObject(parameters)) {
    throw badRequest("a tool's parameters must be a JSON Schema object", `${at}.parameters`);
  }
  if (strict === true) throw badRequest("strict function tools are not supported", `${at}.strict`);
  return {
    name,
    description: typeof description === "string" ? description : "",
    ...(isObject(parameters) ? { parameters: jsonText(parameters) } : {}),
  };
}

/** A `json_schema` response format's `{name, schema}`, found at `at` in the request. */
export function jsonSchemaFormatOf(format: Loose, at: string): KilnRunFields["responseFormat"] {
  const { name, schema } = format;
  if (!isObject(schema)) throw badRequest(`${at}.schema must be a JSON Schema object`, `${at}.schema`);
  return jsonText({ type: "json_schema", name: typeof name === "string" ? name : "response", schema });
}

/** Fields whose empty text stock clients send by default (LlamaIndex's `user: ""`): the same as not sent. */
const BLANK_MEANS_UNSET = new Set(["user", "safety_identifier"]);

/**
 * The request body as an object with its `model` named; a field outside `read` that is given is
 * refused by name (`refused` says why, where there is more to say than "not supported by `api`").
 */
export function bodyOf(raw: unknown, read: ReadonlySet<string>, refused: Record<string, string>, api: string): Loose {
  const body: Loose = isObject(raw) ? raw : {};
  if (typeof body.model !== "string" || body.model === "")
    throw badRequest("you must provide a model parameter", "model");
  for (const [key, value] of Object.entries(body)) {
    if (read.has(key) || !given(value) || (value === "" && BLANK_MEANS_UNSET.has(key))) continue;
    throw badRequest(refused[key] ?? `\`${key}\` is not supported by Kiln's ${api}`, key);
  }
  return body;
}

/**
 * The caller's function tools: `definitionOf` finds a tool's function definition and where it sits
 * (`tools[i].function` or `tools[i]`), undefined for a tool of another type (a 400).
 */
export function functionToolsOf(
  tools: unknown,
  definitionOf: (tool: Loose, at: string) => [Loose, string] | undefined,
): CallerTool[] {
  if (!given(tools)) return [];
  if (!Array.isArray(tools)) throw badRequest("tools must be an array", "tools");
  return tools.map((tool: unknown, i) => {
    const found = isObject(tool) && tool.type === "function" ? definitionOf(tool, `tools[${i}]`) : undefined;
    if (!found) throw badRequest("only function tools are supported", `tools[${i}].type`);
    return functionToolOf(...found);
  });
}

/**
 * `tool_choice`: "auto", "none", "required", or a function tool whose name `nameOf` reads (the
 * name, and where it sits for a 400), undefined for an object that is not one.
 */
export function toolChoiceOf(
  choice: unknown,
  nameOf: (choice: Loose) => [unknown, string] | undefined,
): KilnRunFields["toolChoice"] {
  if (!given(choice)) return undefined;
  if (choice === "auto" || choice === "none" || choice === "required") return { mode: choice, name: "" };
  const named = isObject(choice) && choice.type === "function" ? nameOf(choice) : undefined;
  if (named) {
    const [name, at] = named;
    if (typeof name !== "string") throw badRequest("tool_choice needs the function name", at);
    return { mode: "tool", name };
  }
  throw badRequest('tool_choice must be "auto", "none", "required" or a function tool', "tool_choice");
}

/** An options object (`stream_options`, `reasoning`): each key given must be `allowed`, else a 400 naming it. */
export function checkOptions(body: Loose, name: string, allowed: (key: string, value: unknown) => boolean): void {
  const options = body[name];
  if (!given(options)) return;
  if (!isObject(options)) throw badRequest(`${name} must be an object`, name);
  for (const [key, value] of Object.entries(options)) {
    if (given(value) && !allowed(key, value)) throw badRequest(`${name}.${key} is not supported`, `${name}.${key}`);
  }
}

/** `include_obfuscation: false`, the one stream option meaning nothing more in Kiln (it never pads). */
export const noObfuscation = (key: string, value: unknown) => key === "include_obfuscation" && value === false;

/**
 * A request's name of a run-request setting field (`parameters.topP` is `top_p`,
 * `toolChoice.name` is `tool_choice`), undefined for another field: the run's camel-case
 * name in snake case, unless `names` says where the request keeps it (`responseFormat`, which
 * every API names its own way, or a parameter such as `maxOutputTokens`).
 */
export function settingParamOf(field: string, names: { responseFormat: string } & Record<string, string>) {
  if (field.startsWith("toolChoice")) return "tool_choice";
  if (field.startsWith("responseFormat")) return names.responseFormat;
  const parameter = /^parameters\.(\w+)$/.exec(field)?.[1];
  if (parameter === undefined) return undefined;
  return names[parameter] ?? parameter.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
