/** The version editor's pure parts: the variables a draft declares, and where the API's issues are shown. */
import type { ShownError } from "./api.js";
import {
  detectVariables,
  effectiveSpecs,
  parseSchema,
  type Schema,
  schemaWith,
  type VariableSpec,
} from "./variables.js";
import type { VariablesState } from "./variables-editor.js";

/** The template's variables against the schema as typed. */
export function variablesOf(text: string, templates: string[]): VariablesState {
  const { variables, error } = detectVariables(templates);
  const { schema, issue } = parseSchema(text);
  return {
    detected: variables,
    templateError: error,
    issue,
    typed: schema,
    specs: effectiveSpecs(schema ?? {}, variables),
  };
}

/** `typed` as it is, plus the properties of the rows it does not declare. */
export function withUndeclared(typed: Schema, specs: VariableSpec[]): Schema {
  const declared = isObject(typed.properties) ? typed.properties : {};
  const added = schemaWith(
    { type: "object" },
    specs.filter((s) => !Object.hasOwn(declared, s.name)),
  );
  if (Object.keys(added.properties as object).length === 0) return typed;
  const required = Array.isArray(typed.required) ? typed.required : [];
  return {
    ...typed,
    properties: { ...declared, ...(added.properties as object) },
    required: [...required, ...(added.required as string[])],
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const INLINE = [
  "message",
  "messages",
  "systemPrompt",
  "developerPrompt",
  "temperature",
  "maxOutputTokens",
  "cacheTtlSeconds",
  "variablesSchema",
  "responseFormat",
];

/** The API's error without the issues shown at their fields (each is said once). */
export function unshown(error: ShownError): ShownError {
  const fields = Object.entries(error.fields).filter(([f]) => !INLINE.some((i) => f === i || f.startsWith(`${i}.`)));
  return { message: error.message, fields: Object.fromEntries(fields) };
}

/** The API's issue for a field or anything under it (variablesSchema.properties.x…). */
export function apiIssue(error: ShownError | null, field: string): string | undefined {
  if (!error) return undefined;
  const key = Object.keys(error.fields).find((f) => f === field || f.startsWith(`${field}.`));
  return key ? `${key === field ? "" : `${key}: `}${error.fields[key]}` : undefined;
}
