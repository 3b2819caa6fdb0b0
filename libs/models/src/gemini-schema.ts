/**
 * A JSON Schema as Gemini takes it in `responseJsonSchema` and `parametersJsonSchema`: the subset
 * its structured-output reference lists (docs/providers.md "Gemini"). Keywords outside it are
 * dropped rather than sent, since Gemini answers 400 to some and silently ignores others; `oneOf`
 * becomes `anyOf`, `const` a one-value `enum`, `definitions` `$defs` (with its `$ref`s). Dropping
 * only loosens what the model is held to: the executor still validates the answer against the
 * schema as written.
 */
import { isObject } from "./schema-walk.js";

/** Keywords kept as they are (values that are not schemas). */
const PLAIN = new Set([
  "$id",
  "$ref",
  "$anchor",
  "type",
  "format",
  "title",
  "description",
  "enum",
  "required",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "nullable",
  "propertyOrdering",
]);

export function toGeminiSchema(schema: unknown): unknown {
  if (typeof schema === "boolean") return schema;
  if (!isObject(schema)) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (PLAIN.has(key)) out[key] = key === "$ref" && typeof value === "string" ? renamedRef(value) : value;
    else if (key === "const") out.enum = [value];
    else if (key === "properties" || key === "$defs" || key === "definitions") {
      if (!isObject(value)) continue;
      const target = key === "properties" ? "properties" : "$defs";
      out[target] = {
        ...(out[target] as object | undefined),
        ...Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, toGeminiSchema(sub)])),
      };
    } else if (key === "items") {
      if (Array.isArray(value)) out.prefixItems = value.map(toGeminiSchema);
      else out.items = toGeminiSchema(value);
    } else if (key === "prefixItems" && Array.isArray(value)) out.prefixItems = value.map(toGeminiSchema);
    else if ((key === "anyOf" || key === "oneOf") && Array.isArray(value)) {
      out.anyOf = [...((out.anyOf as unknown[] | undefined) ?? []), ...value.map(toGeminiSchema)];
    } else if (key === "additionalProperties") out.additionalProperties = toGeminiSchema(value);
  }
  return out;
}

function renamedRef(ref: string): string {
  return ref.startsWith("#/definitions/") ? `#/$defs/${ref.slice("#/definitions/".length)}` : ref;
}
