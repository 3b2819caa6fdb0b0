import { DomainError } from "@kiln/kit/errors";
import { describe, expect, it } from "vitest";
import { Issues } from "./issues.js";
import { checkJsonSchema, compileSchema, JSON_SCHEMA_2020_12, parseJsonText } from "./json-schema.js";

function issuesOf(run: (issues: Issues) => void) {
  const issues = new Issues();
  run(issues);
  try {
    issues.throwIfAny();
    return [];
  } catch (e) {
    if (!(e instanceof DomainError)) throw e;
    expect(e.kind).toBe("invalid_argument");
    return e.details;
  }
}

describe("parseJsonText", () => {
  it("parses JSON and keeps a __proto__ key as an own property", () => {
    let value: unknown;
    expect(issuesOf((i) => (value = parseJsonText(i, "x", '{"__proto__":{"a":1}}')))).toEqual([]);
    expect(Object.hasOwn(value as object, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });

  it("refuses text that is not JSON", () => {
    expect(issuesOf((i) => parseJsonText(i, "config", "{nope"))).toEqual([
      { field: "config", issue: "is not valid JSON" },
    ]);
  });

  it("refuses documents nested deeper than 64 levels", () => {
    const deep = `${"[".repeat(65)}${"]".repeat(65)}`;
    expect(issuesOf((i) => parseJsonText(i, "config", deep))[0]?.issue).toMatch(/nested too deeply/);
    expect(issuesOf((i) => parseJsonText(i, "config", `${"[".repeat(64)}${"]".repeat(64)}`))).toEqual([]);
  });
});

describe("checkJsonSchema", () => {
  it("accepts a schema with $ref, $defs, formats and odd property names", () => {
    const schema = JSON.parse(
      '{"type":"object","properties":{"a.b":{"$ref":"#/$defs/city"},"$x":{"type":"string","format":"email"},' +
        '"__proto__":{"type":"integer"}},"$defs":{"city":{"type":"string"}},"x-vendor":true}',
    );
    expect(
      issuesOf((i) => expect(checkJsonSchema(i, "variablesSchema", schema, { objectType: true })).toBe(true)),
    ).toEqual([]);
  });

  it("points at the offending keyword", () => {
    const schema = { type: "object", properties: { city: { type: "strin" } } };
    expect(issuesOf((i) => checkJsonSchema(i, "variablesSchema", schema))).toEqual([
      {
        field: "variablesSchema.properties.city.type",
        issue: 'must be one of "array", "boolean", "integer", "null", "number", "object", "string"',
      },
    ]);
  });

  it("names array positions in the path", () => {
    const schema = { type: "object", required: ["a", 5] };
    expect(issuesOf((i) => checkJsonSchema(i, "inputSchema", schema))).toEqual([
      { field: "inputSchema.required[1]", issue: "must be string" },
    ]);
  });

  it("requires type object when asked", () => {
    expect(issuesOf((i) => checkJsonSchema(i, "inputSchema", { type: "string" }, { objectType: true }))).toEqual([
      { field: "inputSchema.type", issue: 'must be "object"' },
    ]);
    expect(issuesOf((i) => checkJsonSchema(i, "inputSchema", {}, { objectType: true }))).toEqual([
      { field: "inputSchema.type", issue: 'must be "object"' },
    ]);
  });

  it("refuses non-objects, other drafts, unresolvable references and bad patterns", () => {
    expect(issuesOf((i) => checkJsonSchema(i, "s", [1]))).toEqual([
      { field: "s", issue: "must be a JSON Schema object" },
    ]);
    expect(issuesOf((i) => checkJsonSchema(i, "s", { $schema: "http://json-schema.org/draft-07/schema#" }))).toEqual([
      { field: "s.$schema", issue: `must be "${JSON_SCHEMA_2020_12}" or left out` },
    ]);
    expect(issuesOf((i) => checkJsonSchema(i, "s", { $schema: JSON_SCHEMA_2020_12, type: "object" }))).toEqual([]);
    const missingRef = issuesOf((i) => checkJsonSchema(i, "s", { $ref: "#/$defs/nope" }));
    expect(missingRef).toEqual([
      { field: "s", issue: expect.stringMatching(/can't resolve reference #\/\$defs\/nope/) },
    ]);
    const remoteRef = issuesOf((i) => checkJsonSchema(i, "s", { $ref: "https://example.com/schema.json" }));
    expect(remoteRef[0]?.issue).toMatch(/can't resolve reference/);
    // A $ref back to the same value would recurse without end on every run.
    const selfRef = issuesOf((i) => checkJsonSchema(i, "s", { type: "object", $ref: "#" }));
    expect(selfRef).toEqual([{ field: "s.$ref", issue: expect.stringMatching(/never end/) }]);
    const badPattern = issuesOf((i) => checkJsonSchema(i, "s", { type: "string", pattern: "(" }));
    expect(badPattern).toEqual([{ field: "s.pattern", issue: expect.stringMatching(/missing closing \)/) }]);
    // RE2 cannot run backreferences or lookaround in linear time: refused where they were written.
    const backreference = issuesOf((i) =>
      checkJsonSchema(i, "s", { type: "object", properties: { a: { type: "string", pattern: "(x)\\1" } } }),
    );
    expect(backreference).toEqual([{ field: "s.properties.a.pattern", issue: expect.stringMatching(/linear time/) }]);
    const lookahead = issuesOf((i) =>
      checkJsonSchema(i, "s", { type: "object", patternProperties: { "^a(?!b)": {} } }),
    );
    expect(lookahead).toEqual([{ field: "s.patternProperties.^a(?!b)", issue: expect.stringMatching(/linear time/) }]);
  });

  it("lets two organizations use the same $id with different content", () => {
    const one = { $id: "https://example.com/s", type: "object", properties: { a: { type: "string" } } };
    const two = { $id: "https://example.com/s", type: "object", properties: { a: { type: "number" } } };
    expect(issuesOf((i) => checkJsonSchema(i, "s", one))).toEqual([]);
    expect(issuesOf((i) => checkJsonSchema(i, "s", two))).toEqual([]);
    expect(compileSchema(JSON.stringify(one))({ a: "x" })).toBe(true);
    expect(compileSchema(JSON.stringify(two))({ a: "x" })).toBe(false);
  });
});

describe("compileSchema", () => {
  it("caches validators by schema text", () => {
    const text = '{"type":"object","properties":{"n":{"type":"integer"}}}';
    const first = compileSchema(text);
    expect(compileSchema(text)).toBe(first);
    expect(first({ n: 1 })).toBe(true);
    expect(first({ n: 1.5 })).toBe(false);
  });
});
