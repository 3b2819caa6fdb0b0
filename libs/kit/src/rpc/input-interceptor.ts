import type { Interceptor } from "@connectrpc/connect";
import { type FieldIssue, invalidArgument } from "../errors.js";
import { bytesText, LIMITS } from "../limits.js";

/**
 * Every service's first look at a request's text (docs/api.md "Limits"), so that an internal caller
 * meets the bounds the gateway checks for REST callers: a NUL character (which no store keeps) and
 * a field past its size limit are refused as invalid_argument naming the field, before the service
 * does any work. A name must be one line without control characters; elsewhere they are kept. A string that is not valid Unicode
 * (a lone surrogate) never gets here: protobuf's decoding refuses it as invalid_argument, on the
 * wire and in process (transport.ts).
 *
 * Fields are known by their name in any message: `systemPrompt`, `variablesJson`… (the REST field
 * is the name without `Json`). A `kiln.common.v1.JsonText` is measured as JSON by the name of the
 * field that holds it (`variables`, `inputSchema`…). A family's content message (`content`:
 * kiln.catalog.v1.PromptContent, ToolContent) adds nothing to the path: its fields are the REST
 * body's own (`variablesSchema`, not `content.variablesSchema`).
 */
const CHARS: Record<string, number> = {
  systemPrompt: LIMITS.promptTextChars,
  developerPrompt: LIMITS.promptTextChars,
  name: LIMITS.nameChars,
  description: LIMITS.descriptionChars,
};
const JSON_LIMITS: Record<string, number> = {
  variables: LIMITS.variablesBytes,
  input: LIMITS.variablesBytes,
  inputs: LIMITS.variablesBytes,
  variablesSchema: LIMITS.jsonSchemaBytes,
  responseFormat: LIMITS.jsonSchemaBytes,
  inputSchema: LIMITS.jsonSchemaBytes,
  config: LIMITS.toolConfigBytes,
  workflow: LIMITS.workflowBytes,
  expectedOutput: LIMITS.expectedOutputBytes,
  assertions: LIMITS.assertionsBytes,
};
/** Limits by field name: `variablesJson` (a JSON string field) and `variables` (a JsonText). */
const JSON_BYTES: Record<string, number> = Object.fromEntries(
  Object.entries(JSON_LIMITS).flatMap(([name, bytes]) => [
    [name, bytes],
    [`${name}Json`, bytes],
  ]),
);
const JSON_TEXT = "kiln.common.v1.JsonText";
/** Fields whose message's fields sit at the holder's level in the REST body. */
const FLATTENED = new Set(["content"]);

const restName = (key: string) => (key.endsWith("Json") ? key.slice(0, -4) : key);
const join = (base: string, key: string) => (base ? `${base}.${key}` : key);

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A `\u0000` escape in JSON text (not an escaped backslash followed by "u0000"). */
const NUL_ESCAPE = /(^|[^\\])(\\\\)*\\u0000/;

function checkString(key: string, at: string, value: string, issues: FieldIssue[], json = key.endsWith("Json")): void {
  // No store keeps NUL in a string (FerretDB refuses it; docs/api.md "Limits").
  if (value.includes("\0") || (json && value.includes("\\u0000") && NUL_ESCAPE.test(value))) {
    issues.push({ field: at, issue: "must not contain NUL characters" });
    return;
  }
  if (key === "name" && CONTROL.test(value)) {
    issues.push({ field: at, issue: "must be one line without control characters" });
    return;
  }
  const chars = CHARS[key];
  if (chars !== undefined && value.length > chars) {
    issues.push({ field: at, issue: `must be at most ${chars} characters` });
    return;
  }
  const bytes = JSON_BYTES[key];
  // A string's UTF-8 size is at most 3 bytes per unit: only a long one is measured.
  if (bytes !== undefined && value.length * 3 > bytes && Buffer.byteLength(value, "utf8") > bytes) {
    issues.push({ field: at, issue: `must be at most ${bytesText(bytes)} as JSON` });
  }
}

/** Walks a protobuf-es message (plain objects, arrays, maps and oneofs), collecting issues. */
export function messageIssues(message: unknown): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const walk = (value: unknown, key: string, at: string) => {
    if (issues.length >= 20) return;
    if (typeof value === "string") checkString(key, at, value, issues);
    else if (Array.isArray(value)) for (const [i, item] of value.entries()) walk(item, key, `${at}[${i}]`);
    else if (value instanceof Map) for (const [k, v] of value) walk(v, key, join(at, String(k)));
    else if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
      const object = value as Record<string, unknown>;
      if (object.$typeName === JSON_TEXT) {
        if (typeof object.json === "string") checkString(key, at, object.json, issues, true);
        return;
      }
      // A oneof: { case: "fieldName", value }.
      if (typeof object.case === "string" && "value" in object && Object.keys(object).length === 2) {
        walk(object.value, object.case, join(at, restName(object.case)));
        return;
      }
      for (const [k, v] of Object.entries(object)) {
        if (k === "$typeName" || k === "$unknown") continue;
        walk(v, k, FLATTENED.has(k) ? at : join(at, restName(k)));
      }
    }
  };
  walk(message, "", "");
  return issues;
}

export function createInputInterceptor(): Interceptor {
  return (next) => async (req) => {
    if (!req.stream) {
      const issues = messageIssues(req.message);
      if (issues.length > 0) throw invalidArgument("invalid request", issues);
    }
    return next(req);
  };
}
