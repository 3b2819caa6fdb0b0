/**
 * JSON Schema 2020-12 for evaluations: judging the schemas of `json_schema` assertions when a case
 * is saved, and validating outputs against them and against a skill version's output schema.
 */
import { createSchemaAjv } from "@kiln/contracts/schema-ajv";
import { createSchemaCompiler, endlessRefsOf, unsafePatternsOf } from "@kiln/kit/json-schema";
import type { ValidateFunction } from "ajv/dist/2020.js";

export const JSON_SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema";

const metaValidator = createSchemaAjv();

/** Assertion and output schemas, compiled once and cached by their text (kit's compiler). */
const schemas = createSchemaCompiler();
const compile = (schema: unknown): ValidateFunction => schemas.compileValue(schema);

/** Why `schema` is not a usable JSON Schema 2020-12; undefined when it is. */
export function schemaProblemOf(schema: unknown): string | undefined {
  if (typeof schema === "boolean") return undefined;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return "must be a JSON Schema object";
  const declared = (schema as Record<string, unknown>).$schema;
  if (declared !== undefined && declared !== JSON_SCHEMA_2020_12) return `$schema must be "${JSON_SCHEMA_2020_12}"`;
  try {
    if (metaValidator.validateSchema(schema) !== true) {
      const [first] = metaValidator.errors ?? [];
      return `is not a JSON Schema: ${first ? `${first.instancePath || "/"} ${first.message}` : "invalid"}`;
    }
    const [unsafe] = unsafePatternsOf(schema);
    if (unsafe) return `${unsafe.pointer}: ${unsafe.problem}`;
    const [endless] = endlessRefsOf(schema);
    if (endless) return `${endless}: refers back to a schema of the same value: it would never end`;
    // Unresolvable `$ref`s surface only when compiling.
    compile(schema);
  } catch (e) {
    return `is not a usable JSON Schema: ${e instanceof Error ? e.message : String(e)}`;
  }
  return undefined;
}

export type Conformance = { valid: true } | { valid: false; message: string };

/** Does `value` conform to `schema`? A schema that cannot be compiled is reported, never thrown. */
export function conformanceOf(schema: unknown, value: unknown): Conformance {
  let validate: ValidateFunction;
  try {
    validate = compile(schema);
  } catch (e) {
    return { valid: false, message: `the schema cannot be used: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (validate(value)) return { valid: true };
  const message = (validate.errors ?? [])
    .slice(0, 5)
    .map((e) => {
      const missing = (e.params as { missingProperty?: string }).missingProperty;
      const at = e.instancePath || "/";
      return e.keyword === "required" && missing !== undefined ? `${at} misses ${missing}` : `${at} ${e.message}`;
    })
    .join("; ");
  return { valid: false, message: message || "does not match the schema" };
}
