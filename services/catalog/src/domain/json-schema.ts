/**
 * JSON Schema (2020-12) checks for user-supplied schemas: prompt variables, response formats, tool
 * inputs. Schemas arrive as JSON text and are kept as text (api.md: free-form JSON round-trips
 * byte-for-byte); this module only parses them to judge them.
 */

import { fieldIssuesOf, fieldOfPointer, fieldPath } from "@kiln/contracts/field-issues";
import { createSchemaAjv } from "@kiln/contracts/schema-ajv";
import { createSchemaCompiler, endlessRefsOf, unsafePatternsOf } from "@kiln/kit/json-schema";
import { LIMITS } from "@kiln/kit/limits";
import type { ValidateFunction } from "ajv/dist/2020.js";
import type { Issues } from "./issues.js";

export const JSON_SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema";

/** Deeper documents are refused: every walker below (and ajv's) recurses. */
export const MAX_JSON_DEPTH = LIMITS.jsonSchemaDepth;

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Own properties only: a parsed `__proto__` key is an own property, the prototype is not. */
export function ownValue(object: JsonObject, key: string): JsonValue | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

function depthExceeds(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (limit === 0) return true;
  const children = Array.isArray(value) ? value : Object.values(value);
  return children.some((child) => depthExceeds(child, limit - 1));
}

/** Parses user JSON text; on failure adds an issue on `field` and returns undefined. */
export function parseJsonText(issues: Issues, field: string, text: string): JsonValue | undefined {
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    issues.add(field, "is not valid JSON");
    return undefined;
  }
  if (depthExceeds(value, MAX_JSON_DEPTH)) {
    issues.add(field, `is nested too deeply (at most ${MAX_JSON_DEPTH} levels)`);
    return undefined;
  }
  return value;
}

/** Judges schemas against the 2020-12 meta-schema. It never compiles or stores a user schema. */
const metaValidator = createSchemaAjv();

/** The validators of the schemas this process has checked or used, by their text (kit's compiler). */
const schemas = createSchemaCompiler();

/**
 * The validator of a stored schema (JSON text), compiled once and cached by its text. Throws when
 * the text is not a usable schema, which the checks at save time rule out.
 */
export function compileSchema(text: string): ValidateFunction {
  return schemas.compile(text);
}

export interface SchemaCheckOptions {
  /** The schema must say `type: "object"` (variables and tool inputs are objects). */
  objectType?: boolean;
}

/**
 * Is `schema` a usable JSON Schema 2020-12? Adds issues under `field` (pointing at the offending
 * keyword, e.g. `variablesSchema.properties.city.type`) and returns whether it was.
 */
export function checkJsonSchema(
  issues: Issues,
  field: string,
  schema: unknown,
  options: SchemaCheckOptions = {},
): boolean {
  if (!isJsonObject(schema)) {
    issues.add(field, "must be a JSON Schema object");
    return false;
  }
  const declared = ownValue(schema, "$schema");
  if (declared !== undefined && declared !== JSON_SCHEMA_2020_12) {
    issues.add(fieldPath(field, "$schema"), `must be "${JSON_SCHEMA_2020_12}" or left out`);
    return false;
  }
  let valid: boolean;
  try {
    valid = metaValidator.validateSchema(schema) === true;
  } catch (e) {
    issues.add(field, `is not a JSON Schema: ${e instanceof Error ? e.message : String(e)}`);
    return false;
  }
  if (!valid) {
    // One verdict per place: the meta-schema's anyOf branches would otherwise repeat each problem.
    const byField = new Map<string, string>();
    for (const error of metaValidator.errors ?? []) {
      if (error.keyword === "anyOf" || error.keyword === "oneOf") continue;
      const [issue] = fieldIssuesOf([error], field, schema);
      if (issue && !byField.has(issue.field)) byField.set(issue.field, issue.issue);
    }
    if (byField.size === 0) byField.set(field, "is not a JSON Schema");
    for (const [at, issue] of [...byField].slice(0, 20)) issues.add(at, issue);
    return false;
  }
  if (options.objectType && ownValue(schema, "type") !== "object") {
    issues.add(fieldPath(field, "type"), 'must be "object"');
    return false;
  }
  // Patterns run with RE2 (linear time): one it cannot run is refused here, where it was written.
  const unsafe = unsafePatternsOf(schema);
  for (const { pointer, problem } of unsafe) issues.add(fieldOfPointer(field, pointer, schema), problem);
  // A $ref back to a schema of the same instance would recurse without end on every validation.
  const endless = endlessRefsOf(schema);
  for (const pointer of endless) {
    issues.add(fieldOfPointer(field, pointer, schema), "refers back to a schema of the same value: it would never end");
  }
  if (unsafe.length > 0 || endless.length > 0) return false;
  try {
    // Unresolvable `$ref`s and bad `pattern`s surface only when compiling.
    schemas.compileValue(schema);
  } catch (e) {
    issues.add(field, `is not a usable JSON Schema: ${e instanceof Error ? e.message : String(e)}`);
    return false;
  }
  return true;
}
