/**
 * The services' compiler and cache of tenant schemas, and the checks a schema gets when it is
 * saved (patterns RE2 cannot run, `$ref`s that never end). Validators come from the one ajv set-up
 * the SDK shares (contracts/schema-ajv.ts: RE2 for patterns).
 */

import { safeRegexProblem } from "@kiln/contracts/safe-regex";
import { createSchemaAjv } from "@kiln/contracts/schema-ajv";
import type { ValidateFunction } from "ajv/dist/2020.js";
import { LRUCache } from "lru-cache";

/** Compiles tenant schemas and keeps their validators, keyed by the schema's JSON text. */
export interface SchemaCompiler {
  /** The validator of schema JSON text; throws when the text is not a usable schema. */
  compile(text: string): ValidateFunction;
  /** The validator of a parsed schema, cached under its JSON text; throws when it is not usable. */
  compileValue(schema: unknown): ValidateFunction;
}

/**
 * The one compiler and cache of tenant schemas (prompt variables, tool inputs, assertion and output
 * schemas): each schema gets an ajv instance of its own, because schemas of different organizations
 * may declare the same `$id`, which one shared instance refuses (and remembers forever). Schemas
 * are judged against the meta-schema when they are saved, so they are not validated again here.
 * The cache keeps the `maxSchemas` most recently used (default 1,000).
 */
export function createSchemaCompiler(options: { maxSchemas?: number } = {}): SchemaCompiler {
  const compiled = new LRUCache<string, ValidateFunction>({ max: options.maxSchemas ?? 1_000 });
  const compileAs = (text: string, schema: unknown): ValidateFunction => {
    const validate = createSchemaAjv({ validateSchema: false }).compile(schema as object);
    compiled.set(text, validate);
    return validate;
  };
  return {
    compile(text) {
      return compiled.get(text) ?? compileAs(text, JSON.parse(text));
    },
    compileValue(schema) {
      const text: string | undefined = JSON.stringify(schema);
      if (text === undefined) throw new Error("the schema is not JSON");
      return compiled.get(text) ?? compileAs(text, schema);
    },
  };
}

/**
 * The places in a schema holding a regular expression RE2 cannot run, as JSON Pointers with the
 * reason: `pattern` values and `patternProperties` keys, wherever they appear.
 */
export function unsafePatternsOf(schema: unknown): { pointer: string; problem: string }[] {
  const found: { pointer: string; problem: string }[] = [];
  const visit = (value: unknown, pointer: string, depth: number) => {
    if (depth > 128 || typeof value !== "object" || value === null) return;
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) visit(item, `${pointer}/${i}`, depth + 1);
      return;
    }
    for (const [key, child] of Object.entries(value)) {
      const at = `${pointer}/${escapePointer(key)}`;
      if (key === "pattern" && typeof child === "string") {
        const problem = problemOf(child);
        if (problem) found.push({ pointer: at, problem });
      } else if (key === "patternProperties" && typeof child === "object" && child !== null && !Array.isArray(child)) {
        for (const pattern of Object.keys(child)) {
          const problem = problemOf(pattern);
          if (problem) found.push({ pointer: `${at}/${escapePointer(pattern)}`, problem });
        }
      }
      visit(child, at, depth + 1);
    }
  };
  visit(schema, "", 0);
  return found;
}

function problemOf(pattern: string): string | undefined {
  return safeRegexProblem(pattern, "u");
}

/** Keywords whose subschemas apply to the same instance: a cycle through them alone never ends. */
const IN_PLACE_LISTS = ["allOf", "anyOf", "oneOf"];
const IN_PLACE_SINGLE = ["not", "if", "then", "else"];

/**
 * The `$ref`s of a schema that lead back to a schema applying to the same instance without going
 * one level into it (`{"$ref": "#"}` at the root, two `$defs` referring to each other, …): ajv
 * compiles them, and validating any value then recurses until the stack overflows. Returns the
 * pointers of the offending `$ref`s. Only local references (`#…`) are followed.
 */
export function endlessRefsOf(schema: unknown): string[] {
  const at = (pointer: string): unknown => {
    let current: unknown = schema;
    if (pointer === "") return current;
    for (const raw of pointer.slice(1).split("/")) {
      const segment = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      if (typeof current !== "object" || current === null) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
    return current;
  };
  /** Schemas applied in place to the instance `pointer`'s schema sees, with the `$ref` that leads there. */
  const inPlace = (pointer: string): { to: string; via?: string }[] => {
    const node = at(pointer);
    if (typeof node !== "object" || node === null || Array.isArray(node)) return [];
    const record = node as Record<string, unknown>;
    const next: { to: string; via?: string }[] = [];
    for (const key of IN_PLACE_LISTS) {
      const list = record[key];
      if (Array.isArray(list)) for (const i of list.keys()) next.push({ to: `${pointer}/${key}/${i}` });
    }
    for (const key of IN_PLACE_SINGLE) if (record[key] !== undefined) next.push({ to: `${pointer}/${key}` });
    const dependent = record.dependentSchemas;
    if (typeof dependent === "object" && dependent !== null) {
      for (const name of Object.keys(dependent))
        next.push({ to: `${pointer}/dependentSchemas/${escapePointer(name)}` });
    }
    const ref = record.$ref;
    // "#" is the root, "#/…" a JSON Pointer; anchors and other documents are not followed.
    if (typeof ref === "string" && (ref === "#" || ref.startsWith("#/"))) {
      next.push({ to: ref.slice(1), via: `${pointer}/$ref` });
    }
    return next;
  };
  const endless = new Set<string>();
  // Depth-first from every schema node reachable through any keyword; a back edge in the in-place
  // graph is a cycle. The walk is bounded by the schema's size.
  const state = new Map<string, "open" | "done">();
  const dfs = (pointer: string, depth: number) => {
    if (depth > 256) return;
    state.set(pointer, "open");
    for (const { to, via } of inPlace(pointer)) {
      const seen = state.get(to);
      if (seen === "open") {
        if (via) endless.add(via);
      } else if (seen === undefined) {
        dfs(to, depth + 1);
      }
    }
    state.set(pointer, "done");
  };
  const every = (value: unknown, pointer: string, depth: number) => {
    if (depth > 128 || typeof value !== "object" || value === null) return;
    if (!state.has(pointer)) dfs(pointer, 0);
    if (Array.isArray(value)) for (const [i, v] of value.entries()) every(v, `${pointer}/${i}`, depth + 1);
    else for (const [k, v] of Object.entries(value)) every(v, `${pointer}/${escapePointer(k)}`, depth + 1);
  };
  every(schema, "", 0);
  return [...endless];
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}
