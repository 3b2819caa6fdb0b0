import { compileSafeRegex } from "@kiln/contracts/safe-regex";
import { createSchemaAjv } from "@kiln/contracts/schema-ajv";
import { describe, expect, it } from "vitest";
import { createSchemaCompiler, endlessRefsOf, unsafePatternsOf } from "./json-schema.js";

describe("compileSafeRegex", () => {
  it("matches like RegExp.test for the patterns RE2 runs, with the i, m and s flags", () => {
    expect(compileSafeRegex("^ab+c$").test("abbbc")).toBe(true);
    expect(compileSafeRegex("b+").test("abbbc")).toBe(true);
    expect(compileSafeRegex("^B", "i").test("bc")).toBe(true);
    expect(compileSafeRegex("^c$", "m").test("ab\nc")).toBe(true);
    expect(compileSafeRegex("a.b", "s").test("a\nb")).toBe(true);
    expect(compileSafeRegex("a.b").test("a\nb")).toBe(false);
  });

  it("refuses backreferences and lookaround, and unknown flags", () => {
    expect(() => compileSafeRegex("(a)\\1")).toThrow(/linear time/);
    expect(() => compileSafeRegex("a(?=b)")).toThrow(/linear time/);
    expect(() => compileSafeRegex("a", "x")).toThrow(/flag "x"/);
  });

  it("answers a catastrophic pattern on a hostile input in linear time", () => {
    const evil = compileSafeRegex("^(a+)+$");
    // RegExp takes seconds on this input; RE2 does not backtrack. A bound on blocking, not a speed test.
    const started = performance.now();
    expect(evil.test(`${"a".repeat(5_000)}!`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe("createSchemaAjv", () => {
  it("runs pattern, patternProperties and propertyNames with RE2", () => {
    const validate = createSchemaAjv().compile({
      type: "object",
      properties: { s: { type: "string", pattern: "^(a+)+$" } },
      patternProperties: { "^(x+)+$": { type: "number" } },
      propertyNames: { pattern: "^(a|x|s)+$" },
    });
    expect(validate({ s: `${"a".repeat(40)}b` })).toBe(false);
    expect(validate({ s: "aaa", xxx: 1 })).toBe(true);
    expect(validate({ xxx: "not a number" })).toBe(false);
  });
});

describe("unsafePatternsOf", () => {
  it("names every pattern RE2 cannot run, by JSON Pointer", () => {
    const found = unsafePatternsOf({
      properties: { a: { pattern: "(x)\\1" }, pattern: { type: "string" } },
      patternProperties: { "a(?!b)": {} },
      items: [{ pattern: "^ok$" }],
    });
    expect(found.map((f) => f.pointer)).toEqual(["/properties/a/pattern", "/patternProperties/a(?!b)"]);
  });
});

describe("endlessRefsOf", () => {
  it("finds references that apply a schema to the same instance again", () => {
    expect(endlessRefsOf({ type: "object", $ref: "#" })).toEqual(["/$ref"]);
    expect(
      endlessRefsOf({ $defs: { a: { $ref: "#/$defs/b" }, b: { allOf: [{ $ref: "#/$defs/a" }] } }, $ref: "#/$defs/a" }),
    ).toHaveLength(1);
    expect(endlessRefsOf({ anyOf: [{ $ref: "#" }] })).toEqual(["/anyOf/0/$ref"]);
  });

  it("accepts recursion that goes one level into the instance each time", () => {
    const tree = {
      type: "object",
      properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
    };
    expect(endlessRefsOf(tree)).toEqual([]);
    expect(endlessRefsOf({ $defs: { n: { properties: { next: { $ref: "#/$defs/n" } } } }, $ref: "#/$defs/n" })).toEqual(
      [],
    );
    const validate = createSchemaAjv().compile(tree);
    expect(validate({ name: "a", children: [{ name: "b", children: [] }] })).toBe(true);
  });
});

describe("createSchemaCompiler", () => {
  it("compiles a schema once per text, from text or from the parsed value", () => {
    const schemas = createSchemaCompiler();
    const schema = { type: "object", required: ["a"] };
    const first = schemas.compile(JSON.stringify(schema));
    expect(schemas.compileValue(schema)).toBe(first);
    expect(first({ a: 1 })).toBe(true);
    expect(first({})).toBe(false);
  });

  it("keeps schemas of different organizations declaring the same $id apart", () => {
    const schemas = createSchemaCompiler();
    const one = schemas.compileValue({ $id: "https://x.test/s", type: "string" });
    const two = schemas.compileValue({ $id: "https://x.test/s", type: "number" });
    expect(one("a")).toBe(true);
    expect(two("a")).toBe(false);
  });

  it("keeps at most maxSchemas validators, dropping the least recently used", () => {
    const schemas = createSchemaCompiler({ maxSchemas: 1 });
    const a = schemas.compileValue({ type: "string" });
    schemas.compileValue({ type: "number" });
    expect(schemas.compileValue({ type: "string" })).not.toBe(a);
  });

  it("throws on a schema that cannot be compiled", () => {
    const schemas = createSchemaCompiler();
    expect(() => schemas.compile("{")).toThrow();
    expect(() => schemas.compileValue({ $ref: "#/$defs/missing" })).toThrow();
  });
});
