/**
 * Validates a tool call's input against the tool version's `inputSchema` (JSON Schema 2020-12).
 * The catalog judged the schema when the version was saved; here kit's schema compiler compiles it
 * once per schema text and caches it; the issues are named as everywhere (contracts/field-issues.ts).
 */
import { type FieldIssue, fieldIssuesOf } from "@kiln/contracts/field-issues";
import { createSchemaCompiler } from "@kiln/kit/json-schema";

export type InputCheck = { ok: true } | { ok: false; issues: FieldIssue[] };

export interface InputValidator {
  /** Throws when `schema` cannot be compiled (the catalog's checks at save time rule that out). */
  check(schema: unknown, input: unknown): InputCheck;
}

export function createInputValidator(options: { maxCachedSchemas?: number } = {}): InputValidator {
  const schemas = createSchemaCompiler({ maxSchemas: options.maxCachedSchemas });

  return {
    check(schema, input) {
      const validate = schemas.compileValue(schema);
      if (validate(input)) return { ok: true };
      return { ok: false, issues: fieldIssuesOf(validate.errors ?? [], "input", input) };
    },
  };
}
