/**
 * The content rules of a prompt version (docs/concepts.md "Prompt version", api.md "Prompts"): templates,
 * variables schema, response format, sampling settings, model and response-cache default. Pure:
 * tools are resolved by the use case.
 */

import type { PromptInclude } from "@kiln/contracts/partials";
import { LIMITS } from "@kiln/kit/limits";
import { fieldPath, type Issues } from "./issues.js";
import { checkJsonSchema, isJsonObject, type JsonObject, ownValue, parseJsonText } from "./json-schema.js";
import { checkPromptMessages, type PromptMessageInput, type TemplateMessage } from "./prompt-messages.js";
import { checkTemplate, includesOf } from "./templates.js";

export const DEFAULT_VARIABLES_SCHEMA = '{"type":"object"}';
export const DEFAULT_RESPONSE_FORMAT = '{"type":"text"}';
export const MAX_OUTPUT_TOKENS = 128_000;
export const MAX_TEMPERATURE = 2;
/** `provider/model`, e.g. `openai/gpt-4o-mini` or `local/echo`; whether it exists is decided at run time. */
export const MODEL_ID = /^[a-z0-9][a-z0-9_-]{0,63}\/[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const RESPONSE_FORMAT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export type ResponseFormat = { type: "text" } | { type: "json_schema"; name?: string; schema: JsonObject };

export interface PromptVersionInput {
  /** "" when the version is given as `messages`. */
  systemPrompt: string;
  developerPrompt?: string;
  variablesSchemaJson?: string;
  responseFormatJson?: string;
  temperature?: number;
  maxOutputTokens?: number;
  /** The response cache's default TTL for the version's runs (docs/cache.md "Defaults"). */
  cacheTtlSeconds?: number;
  model?: string;
  /** A chat version's template; empty or undefined: the version is its system and developer prompts. */
  messages?: readonly PromptMessageInput[];
}

/** A checked version's content; the JSON texts are kept exactly as given. */
export interface PromptVersionContent {
  /** "" for a version created with `messages`. */
  systemPrompt: string;
  developerPrompt: string | null;
  /** Set only on a version created with messages (absent on versions stored before chat prompts). */
  messages?: TemplateMessage[] | null;
  /** JSON text. */
  variablesSchema: string;
  /** JSON text: {"type":"text"} or {"type":"json_schema","name"?,"schema"}. */
  responseFormat: string;
  temperature: number | null;
  maxOutputTokens: number | null;
  /** Set only on a version created with one (absent: no default, as on versions stored before it). */
  cacheTtlSeconds?: number;
  /** The prompts its templates include (prompt-includes.ts), in order; absent: none. */
  includes?: PromptInclude[];
}

/** A version's templates with the field each is written in (`systemPrompt`, `messages[2].content`). */
export function templatesOf(v: {
  systemPrompt: string;
  developerPrompt: string | null;
  messages?: TemplateMessage[] | null;
}): { field: string; template: string }[] {
  if (v.messages && v.messages.length > 0) {
    return v.messages.flatMap((m, i) =>
      m.role === "placeholder" ? [] : [{ field: fieldPath(fieldPath("messages", i), "content"), template: m.content }],
    );
  }
  const own = [{ field: "systemPrompt", template: v.systemPrompt }];
  return v.developerPrompt === null ? own : [...own, { field: "developerPrompt", template: v.developerPrompt }];
}

/** Adds an issue on `field` unless `value` is a TTL the response cache takes (1 to 7 days, in seconds). */
export function checkCacheTtl(issues: Issues, field: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isInteger(value) && value >= 1 && value <= LIMITS.cacheTtlSeconds)) {
    issues.add(field, `must be an integer from 1 to ${LIMITS.cacheTtlSeconds} (seconds)`);
  }
}

export function checkModelId(issues: Issues, field: string, model: string): void {
  if (!MODEL_ID.test(model)) issues.add(field, 'must be a model id such as "openai/gpt-4o-mini"');
}

function checkResponseFormat(issues: Issues, text: string): void {
  const field = "responseFormat";
  const value = parseJsonText(issues, field, text);
  if (value === undefined) return;
  if (!isJsonObject(value)) {
    issues.add(field, 'must be {"type":"text"} or {"type":"json_schema","schema":{...}}');
    return;
  }
  const type = ownValue(value, "type");
  if (type !== "text" && type !== "json_schema") {
    issues.add(fieldPath(field, "type"), "must be text or json_schema");
    return;
  }
  const known = type === "text" ? ["type"] : ["type", "name", "schema"];
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) issues.add(fieldPath(field, key), `is not a field of a ${type} response format`);
  }
  if (type === "text") return;
  const name = ownValue(value, "name");
  if (name !== undefined && (typeof name !== "string" || !RESPONSE_FORMAT_NAME.test(name))) {
    issues.add(fieldPath(field, "name"), "must be 1 to 64 letters, digits, _ or -");
  }
  const schema = ownValue(value, "schema");
  if (schema === undefined) issues.add(fieldPath(field, "schema"), "is required");
  else checkJsonSchema(issues, fieldPath(field, "schema"), schema);
}

/** Checks a version's content, adding every problem to `issues`. */
export function checkPromptVersion(issues: Issues, input: PromptVersionInput): PromptVersionContent {
  const chat = input.messages !== undefined && input.messages.length > 0;
  const systemPrompt = chat ? "" : issues.content("systemPrompt", input.systemPrompt);
  const developerPrompt =
    chat || input.developerPrompt === undefined
      ? null
      : issues.content("developerPrompt", input.developerPrompt, { min: 0 });
  if (chat) {
    // One shape per version: a chat version's system text is its first message, never a second field.
    if (input.systemPrompt !== "")
      issues.add("systemPrompt", "cannot be given with messages (put it in a system message)");
    if (input.developerPrompt !== undefined)
      issues.add("developerPrompt", "cannot be given with messages (put it in a developer message)");
  }
  const variablesSchema = input.variablesSchemaJson ?? DEFAULT_VARIABLES_SCHEMA;
  const parsed = parseJsonText(issues, "variablesSchema", variablesSchema);
  const schema =
    parsed !== undefined &&
    checkJsonSchema(issues, "variablesSchema", parsed, { objectType: true }) &&
    isJsonObject(parsed)
      ? parsed
      : undefined;
  const messages = chat ? checkPromptMessages(issues, input.messages ?? [], schema) : null;
  if (!chat && schema) {
    checkTemplate(issues, "systemPrompt", systemPrompt, schema);
    if (developerPrompt !== null) checkTemplate(issues, "developerPrompt", developerPrompt, schema);
  }
  const responseFormat = input.responseFormatJson ?? DEFAULT_RESPONSE_FORMAT;
  checkResponseFormat(issues, responseFormat);
  const { temperature, maxOutputTokens } = input;
  if (
    temperature !== undefined &&
    !(Number.isFinite(temperature) && temperature >= 0 && temperature <= MAX_TEMPERATURE)
  ) {
    issues.add("temperature", `must be a number from 0 to ${MAX_TEMPERATURE}`);
  }
  if (
    maxOutputTokens !== undefined &&
    !(Number.isInteger(maxOutputTokens) && maxOutputTokens >= 1 && maxOutputTokens <= MAX_OUTPUT_TOKENS)
  ) {
    issues.add("maxOutputTokens", `must be an integer from 1 to ${MAX_OUTPUT_TOKENS}`);
  }
  checkCacheTtl(issues, "cacheTtlSeconds", input.cacheTtlSeconds);
  if (input.model !== undefined) checkModelId(issues, "model", input.model);
  const includes = includesOf(templatesOf({ systemPrompt, developerPrompt, messages }));
  return {
    ...(includes.length > 0 && { includes: includes.map(({ name, label }) => ({ name, label })) }),
    systemPrompt,
    developerPrompt,
    ...(messages && { messages }),
    variablesSchema,
    responseFormat,
    temperature: temperature ?? null,
    maxOutputTokens: maxOutputTokens ?? null,
    ...(input.cacheTtlSeconds !== undefined && { cacheTtlSeconds: input.cacheTtlSeconds }),
  };
}

/** The response format of a stored (already checked) version. */
export function parseResponseFormat(text: string): ResponseFormat {
  const value = JSON.parse(text) as JsonObject;
  const schema = ownValue(value, "schema");
  if (value.type === "json_schema" && isJsonObject(schema)) {
    const name = ownValue(value, "name");
    return { type: "json_schema", ...(typeof name === "string" && { name }), schema };
  }
  return { type: "text" };
}
