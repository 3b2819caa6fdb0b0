/**
 * Makes up a deterministic instance of a JSON Schema, for local/echo's tool inputs and JSON
 * answers (api.md "Identity"): strings hold the given text, numbers their minimum or 0, booleans
 * false, enums their first value, const its value, arrays one item, objects every declared
 * property (required ones always, optional ones unless they would recurse). $ref into the same
 * document ($defs, definitions, "#"), allOf (merged), and the first branch of oneOf/anyOf are
 * followed. Not honoured: `pattern`, `not`, if/then/else, uniqueItems beyond one item, and oneOf
 * branches that are not mutually exclusive.
 */
import type { JsonSchema } from "./provider.js";
import {
  additionalSchema,
  asArray,
  chooseBranch,
  findAnchor,
  isObject,
  mentionsRef,
  type Schema,
} from "./schema-walk.js";

export interface SchemaInstanceOptions {
  /** What string fields hold (cut or padded to the schema's length limits). */
  text: string;
  /** Values for top-level properties by name (local/echo: the run's variables), used where their type fits. */
  topLevelValues?: Record<string, unknown>;
}

type JsonType = "string" | "number" | "integer" | "boolean" | "null" | "array" | "object";

const MAX_DEPTH = 64;

/** Sample values of string formats ajv-formats checks, so the instance passes format validation. */
const FORMAT_SAMPLES: Record<string, string> = {
  "date-time": "1970-01-01T00:00:00Z",
  date: "1970-01-01",
  time: "00:00:00Z",
  duration: "P1D",
  email: "echo@example.com",
  "idn-email": "echo@example.com",
  hostname: "example.com",
  "idn-hostname": "example.com",
  ipv4: "127.0.0.1",
  ipv6: "::1",
  uri: "https://example.com/",
  "uri-reference": "https://example.com/",
  iri: "https://example.com/",
  "iri-reference": "https://example.com/",
  url: "https://example.com/",
  "uri-template": "https://example.com/",
  uuid: "00000000-0000-0000-0000-000000000000",
  "json-pointer": "",
  "relative-json-pointer": "0",
  regex: ".*",
  byte: "",
};

export function buildSchemaInstance(schema: Schema, options: SchemaInstanceOptions): unknown {
  return new InstanceBuilder(schema, options).build(schema, 0, ["#"], true);
}

class InstanceBuilder {
  constructor(
    private readonly root: Schema,
    private readonly options: SchemaInstanceOptions,
  ) {}

  build(input: Schema | undefined, depth: number, refs: string[], topLevel = false): unknown {
    if (depth > MAX_DEPTH) throw new Error("the schema nests or recurses too deeply for an instance");
    if (input === false) throw new Error("the schema admits no value");
    if (input === undefined || input === true) return this.options.text;
    const { schema, refs: active } = this.flatten(input, refs);
    if ("const" in schema) return schema.const;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
    switch (typeOf(schema)) {
      case "object":
        return this.buildObject(schema, depth, active, topLevel);
      case "array":
        return this.buildArray(schema, depth, active);
      case "string":
        return stringFor(schema, this.options.text);
      case "integer":
        return numberFor(schema, true);
      case "number":
        return numberFor(schema, false);
      case "boolean":
        return false;
      case "null":
        return null;
    }
  }

  /**
   * Follows $ref, allOf and the first oneOf/anyOf branch into one plain schema; `refs` gains the
   * refs followed, so that optional properties leading back into them can be left out.
   */
  private flatten(input: JsonSchema, refs: string[]): { schema: JsonSchema; refs: string[] } {
    const { $ref, allOf, oneOf, anyOf, ...rest } = input;
    let schema: JsonSchema = rest;
    let active = refs;
    const include = (part: unknown) => {
      const flat = this.flatten(isObject(part) ? part : {}, active);
      schema = mergeSchemas(flat.schema, schema);
      active = flat.refs;
    };
    if (typeof $ref === "string") {
      if (active.filter((r) => r === $ref).length >= 2) throw new Error(`the schema recurses through ${$ref}`);
      const target = this.resolveRef($ref);
      active = [...active, $ref];
      include(target);
    }
    if (Array.isArray(allOf)) for (const part of allOf) include(part);
    for (const branches of [oneOf, anyOf]) {
      if (Array.isArray(branches) && branches.length > 0) include(chooseBranch(branches, active));
    }
    return { schema, refs: active };
  }

  private resolveRef(ref: string): Schema | undefined {
    if (!ref.startsWith("#")) return undefined;
    const pointer = decodeURIComponent(ref.slice(1));
    let node: unknown = this.root;
    if (pointer === "") return node as Schema;
    if (!pointer.startsWith("/")) return findAnchor(this.root, pointer);
    for (const raw of pointer.slice(1).split("/")) {
      const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
      if (node === null || typeof node !== "object") return undefined;
      node = (node as Record<string, unknown>)[key];
    }
    return typeof node === "boolean" || (node !== null && typeof node === "object") ? (node as Schema) : undefined;
  }

  private buildObject(schema: JsonSchema, depth: number, refs: string[], topLevel: boolean): Record<string, unknown> {
    const properties = isObject(schema.properties) ? (schema.properties as Record<string, Schema>) : {};
    const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
    const given = topLevel ? (this.options.topLevelValues ?? {}) : {};
    const out: Record<string, unknown> = {};
    const names = [...Object.keys(properties), ...[...required].filter((n) => !Object.hasOwn(properties, n))];
    for (const name of names) {
      const property = Object.hasOwn(properties, name) ? properties[name] : additionalSchema(schema);
      if (property === false) continue;
      if (Object.hasOwn(given, name) && this.fits(given[name], property, refs)) {
        out[name] = given[name];
        continue;
      }
      // An optional property that leads back into a schema being expanded would never end.
      if (!required.has(name) && mentionsRef(property, refs)) continue;
      out[name] = this.build(property, depth + 1, refs);
    }
    return out;
  }

  private buildArray(schema: JsonSchema, depth: number, refs: string[]): unknown[] {
    const prefix = Array.isArray(schema.prefixItems)
      ? (schema.prefixItems as Schema[])
      : Array.isArray(schema.items)
        ? (schema.items as Schema[])
        : [];
    const rest: Schema | undefined = Array.isArray(schema.items)
      ? (schema.additionalItems as Schema | undefined)
      : (schema.items as Schema | undefined);
    const minItems = typeof schema.minItems === "number" ? schema.minItems : 0;
    const maxItems = typeof schema.maxItems === "number" ? schema.maxItems : Number.POSITIVE_INFINITY;
    if (prefix.length > 0) {
      const items = prefix.map((item) => this.build(item, depth + 1, refs));
      for (let i = items.length; i < minItems; i++) items.push(this.build(rest, depth + 1, refs));
      return items.slice(0, Math.max(minItems, Math.min(items.length, maxItems)));
    }
    // One item, more only if minItems asks; none where an item would recurse and none are needed.
    let count = Math.min(Math.max(1, minItems), maxItems);
    if (rest === false || (minItems === 0 && mentionsRef(rest, refs))) count = 0;
    return Array.from({ length: count }, () => this.build(rest, depth + 1, refs));
  }

  /** Whether a given value (a variable) may stand for a property: JSON type, enum and const agree. */
  private fits(value: unknown, property: Schema | undefined, refs: string[]): boolean {
    if (property === undefined || property === true) return true;
    if (property === false) return false;
    const { schema } = this.flatten(property, refs);
    if ("const" in schema) return JSON.stringify(schema.const) === JSON.stringify(value);
    if (Array.isArray(schema.enum)) return schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value));
    const types = declaredTypes(schema);
    if (types.length === 0) return true;
    return types.some((t) => isOfType(value, t));
  }
}

function typeOf(schema: JsonSchema): JsonType {
  const types = declaredTypes(schema);
  const chosen = types.find((t) => t !== "null") ?? types[0];
  if (chosen) return chosen;
  if ("properties" in schema || "required" in schema || "additionalProperties" in schema) return "object";
  if ("items" in schema || "prefixItems" in schema || "minItems" in schema) return "array";
  if ("minimum" in schema || "maximum" in schema || "exclusiveMinimum" in schema || "multipleOf" in schema)
    return "number";
  return "string";
}

function declaredTypes(schema: JsonSchema): JsonType[] {
  const t = schema.type;
  if (typeof t === "string") return [t as JsonType];
  if (Array.isArray(t)) return t.filter((x): x is JsonType => typeof x === "string");
  return [];
}

function isOfType(value: unknown, type: JsonType): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    case "array":
      return Array.isArray(value);
    case "object":
      return isObject(value);
  }
}

function stringFor(schema: JsonSchema, text: string): string {
  const format = typeof schema.format === "string" ? FORMAT_SAMPLES[schema.format] : undefined;
  // Code points, as JSON Schema counts them (ajv too).
  let chars = Array.from(format ?? text);
  if (typeof schema.maxLength === "number") chars = chars.slice(0, schema.maxLength);
  if (typeof schema.minLength === "number" && chars.length < schema.minLength) {
    chars = [...chars, ...".".repeat(schema.minLength - chars.length)];
  }
  return chars.join("");
}

/** An exclusive bound; draft 4 wrote it as a boolean qualifying the inclusive one (`bound`). */
const exclusiveBound = (exclusive: unknown, bound: number | undefined): number | undefined =>
  typeof exclusive === "number" ? exclusive : exclusive === true ? bound : undefined;

function numberFor(schema: JsonSchema, integer: boolean): number {
  const minimum = typeof schema.minimum === "number" ? schema.minimum : undefined;
  const maximum = typeof schema.maximum === "number" ? schema.maximum : undefined;
  const exMin = exclusiveBound(schema.exclusiveMinimum, minimum);
  const exMax = exclusiveBound(schema.exclusiveMaximum, maximum);
  const step = typeof schema.multipleOf === "number" && schema.multipleOf > 0 ? schema.multipleOf : integer ? 1 : 0;
  // toPrecision drops binary noise such as 0.30000000000000004.
  const up = (v: number) => (step > 0 ? Number((Math.ceil(v / step) * step).toPrecision(15)) : v);
  const down = (v: number) => (step > 0 ? Number((Math.floor(v / step) * step).toPrecision(15)) : v);

  let value = up(minimum ?? 0);
  if (exMin !== undefined && value <= exMin) value = step > 0 ? up(exMin + step / 2) : exMin + 1;
  const aboveMax = (v: number) => (maximum !== undefined && v > maximum) || (exMax !== undefined && v >= exMax);
  if (aboveMax(value)) {
    if (maximum !== undefined && exMax !== maximum) value = down(maximum);
    else if (exMax !== undefined)
      value = step > 0 ? down(exMax - step / 2) : exMin !== undefined ? (exMin + exMax) / 2 : exMax - 1;
  }
  return value === 0 ? 0 : value; // no -0
}

function mergeSchemas(a: JsonSchema, b: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...a, ...b };
  if (isObject(a.properties) && isObject(b.properties)) {
    const properties: Record<string, unknown> = { ...a.properties };
    for (const [name, schema] of Object.entries(b.properties)) {
      properties[name] = name in properties ? { allOf: [properties[name], schema] } : schema;
    }
    out.properties = properties;
  }
  if (Array.isArray(a.required) || Array.isArray(b.required)) {
    out.required = [...new Set([...asArray(a.required), ...asArray(b.required)])];
  }
  if (a.type !== undefined && b.type !== undefined) {
    const bTypes = new Set(declaredTypes(b));
    const common = declaredTypes(a).filter((t) => bTypes.has(t) || (t === "integer" && bTypes.has("number")));
    if (common.length > 0) out.type = common;
  }
  for (const key of ["minimum", "minLength", "minItems", "exclusiveMinimum"] as const) {
    if (typeof a[key] === "number" && typeof b[key] === "number") out[key] = Math.max(a[key], b[key]);
  }
  for (const key of ["maximum", "maxLength", "maxItems", "exclusiveMaximum"] as const) {
    if (typeof a[key] === "number" && typeof b[key] === "number") out[key] = Math.min(a[key], b[key]);
  }
  return out;
}
