/** The variables schema of a prompt, inferred from its template and the tests' values. */
import { parseTemplate } from "@kiln/contracts/template-parse";
import type { Json, JsonObject } from "./config.js";

/** A JSON Schema for a value seen in the tests: its type, and an object's properties. */
export function schemaOfValues(values: Json[]): JsonObject {
  const types = new Set(
    values.map((v) =>
      v === null
        ? "null"
        : Array.isArray(v)
          ? "array"
          : typeof v === "number" && Number.isInteger(v)
            ? "integer"
            : typeof v,
    ),
  );
  if (types.size !== 1) return {};
  const [type] = [...types];
  if (type === "object") {
    const objects = values as JsonObject[];
    const keys = [...new Set(objects.flatMap((o) => Object.keys(o)))];
    return {
      type: "object",
      properties: Object.fromEntries(
        keys.map((k) => [k, schemaOfValues(objects.filter((o) => Object.hasOwn(o, k)).map((o) => o[k] as Json))]),
      ),
    };
  }
  return type === "integer" ? { type: "number" } : { type: type ?? "string" };
}

/** The variables schema of a template: every top-level name it uses, typed by the tests' values. */
export function variablesSchemaOf(
  templates: readonly string[],
  tests: readonly JsonObject[],
  at: string,
  warnings: string[],
): JsonObject {
  const names = new Set<string>();
  for (const t of templates) {
    try {
      const walk = (spans: unknown[]) => {
        for (const span of spans as [string, string, number, number, unknown[]?][]) {
          const [type, value, , , children] = span;
          if (["name", "&", "#", "^"].includes(type)) {
            const top = value.split(".")[0];
            if (top && top !== ".") names.add(top);
          }
          if (children) walk(children);
        }
      };
      walk(parseTemplate(t));
    } catch (e) {
      warnings.push(`${at}: the template does not parse (${e instanceof Error ? e.message : String(e)})`);
    }
  }
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const name of [...names].sort()) {
    const values = tests.filter((v) => Object.hasOwn(v, name)).map((v) => v[name] as Json);
    const schema = values.length > 0 ? schemaOfValues(values) : { type: "string" };
    properties[name] =
      Object.keys(schema).length > 0 ? schema : { description: "values of several types in the tests" };
    if (tests.length > 0 && values.length === tests.length) required.push(name);
  }
  return { type: "object", properties, ...(required.length > 0 && { required }) };
}
