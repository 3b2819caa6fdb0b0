/**
 * Validates a tool call's input against the tool version's `inputSchema` (JSON Schema 2020-12).
 * The catalog judged the schema when the version was saved; here kit's schema compiler compiles it
 * once per schema text and caches it.
 */
import type { FieldIssue } from "@kiln/kit/errors";
import { createSchemaCompiler } from "@kiln/kit/json-schema";
import type { ErrorObject } from "ajv/dist/2020.js";

export type InputCheck = { ok: true } | { ok: false; issues: FieldIssue[] };

export interface InputValidator {
  /** Throws when `schema` cannot be compiled (the catalog's checks at save time rule that out). */
  check(schema: unknown, input: unknown): InputCheck;
}

/** `/items/0/city` under `input` → `input.items[0].city`. */
function fieldOfPointer(pointer: string): string {
  let field = "input";
  if (pointer === "") return field;
  for (const raw of pointer.slice(1).split("/")) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    field += /^(0|[1-9]\d*)$/.test(segment) ? `[${segment}]` : `.${segment}`;
  }
  return field;
}

function issueOf(error: ErrorObject): FieldIssue {
  const field = fieldOfPointer(error.instancePath);
  const params = error.params as { missingProperty?: string; allowedValues?: unknown[]; additionalProperty?: string };
  if (error.keyword === "required" && params.missingProperty !== undefined) {
    return { field: `${field}.${params.missingProperty}`, issue: "is required" };
  }
  if (error.keyword === "additionalProperties" && params.additionalProperty !== undefined) {
    return { field: `${field}.${params.additionalProperty}`, issue: "is not allowed" };
  }
  if (error.keyword === "enum" && Array.isArray(params.allowedValues)) {
    return { field, issue: `must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(", ")}` };
  }
  return { field, issue: error.message ?? "is invalid" };
}

export function createInputValidator(options: { maxCachedSchemas?: number } = {}): InputValidator {
  const schemas = createSchemaCompiler({ maxSchemas: options.maxCachedSchemas });

  return {
    check(schema, input) {
      const validate = schemas.compileValue(schema);
      if (validate(input)) return { ok: true };
      const seen = new Set<string>();
      const issues: FieldIssue[] = [];
      for (const issue of (validate.errors ?? []).map(issueOf)) {
        const key = `${issue.field}\n${issue.issue}`;
        if (!seen.has(key)) issues.push(issue);
        seen.add(key);
      }
      return { ok: false, issues };
    },
  };
}
