import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import ajvFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import type { JsonSchema } from "./provider.js";
import { buildSchemaInstance } from "./schema-instance.js";

const TEXT = "You are terse.\n\nSummarize the weather in Paris";

const ajv2020 = new Ajv2020({ strict: false, allErrors: true });
ajvFormats.default(ajv2020);
const ajv07 = new Ajv({ strict: false, allErrors: true });
ajvFormats.default(ajv07);

function expectValid(schema: JsonSchema | boolean, instance: unknown, ajv: Ajv | Ajv2020 = ajv2020): void {
  const validate = ajv.compile(schema);
  const ok = validate(instance);
  expect(validate.errors ?? [], JSON.stringify(instance)).toEqual([]);
  expect(ok).toBe(true);
}

/** Schemas users write for response formats and tool inputs; each instance must validate. */
const SPREAD: [string, JsonSchema][] = [
  [
    "flat object with every scalar type",
    {
      type: "object",
      properties: {
        answer: { type: "string" },
        score: { type: "number" },
        count: { type: "integer" },
        ok: { type: "boolean" },
        level: { enum: ["low", "high"] },
        nothing: { type: "null" },
      },
      required: ["answer", "score"],
      additionalProperties: false,
    },
  ],
  [
    "nested objects and arrays of objects",
    {
      type: "object",
      properties: {
        meta: { type: "object", properties: { source: { type: "string" } }, required: ["source"] },
        items: {
          type: "array",
          items: { type: "object", properties: { name: { type: "string" }, qty: { type: "integer", minimum: 1 } } },
          minItems: 1,
        },
      },
      required: ["meta", "items"],
    },
  ],
  [
    "$defs and $ref with sibling keywords",
    {
      $defs: { city: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
      type: "object",
      properties: { from: { $ref: "#/$defs/city" }, to: { $ref: "#/$defs/city", description: "destination" } },
      required: ["from", "to"],
    },
  ],
  [
    "a recursive tree",
    {
      $defs: {
        node: {
          type: "object",
          properties: { label: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } },
          required: ["label", "children"],
        },
      },
      $ref: "#/$defs/node",
    },
  ],
  [
    "a required nullable self-reference",
    {
      $defs: {
        item: {
          type: "object",
          properties: { value: { type: "string" }, next: { anyOf: [{ $ref: "#/$defs/item" }, { type: "null" }] } },
          required: ["value", "next"],
        },
      },
      $ref: "#/$defs/item",
    },
  ],
  ["a root self-reference", { type: "object", properties: { name: { type: "string" }, parent: { $ref: "#" } } }],
  [
    "oneOf discriminated by const",
    {
      oneOf: [
        {
          type: "object",
          properties: { kind: { const: "circle" }, r: { type: "number", minimum: 1 } },
          required: ["kind", "r"],
        },
        {
          type: "object",
          properties: { kind: { const: "square" }, side: { type: "number" } },
          required: ["kind", "side"],
        },
      ],
    },
  ],
  [
    "nullable fields in three spellings",
    {
      type: "object",
      properties: {
        a: { anyOf: [{ type: "null" }, { type: "string" }] },
        b: { type: ["null", "integer"], minimum: 2 },
        c: { oneOf: [{ type: "string", maxLength: 3 }, { type: "null" }] },
      },
      required: ["a", "b", "c"],
    },
  ],
  [
    "allOf merged",
    {
      allOf: [
        { type: "object", properties: { id: { type: "string", format: "uuid" } }, required: ["id"] },
        { properties: { tags: { type: "array", items: { type: "string" } } }, required: ["tags"] },
      ],
    },
  ],
  [
    "numeric bounds",
    {
      type: "object",
      properties: {
        min3: { type: "number", minimum: 3 },
        positiveInt: { type: "integer", exclusiveMinimum: 0 },
        negative: { type: "number", maximum: -5 },
        fraction: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
        step: { type: "integer", minimum: 7, multipleOf: 5 },
        decimal: { type: "number", minimum: 2.5 },
        ceiling: { type: "integer", minimum: 2.5 },
      },
      required: ["min3", "positiveInt", "negative", "fraction", "step", "decimal", "ceiling"],
    },
  ],
  [
    "string lengths and formats",
    {
      type: "object",
      properties: {
        short: { type: "string", maxLength: 5 },
        long: { type: "string", minLength: 200 },
        when: { type: "string", format: "date-time" },
        day: { type: "string", format: "date" },
        mail: { type: "string", format: "email" },
        link: { type: "string", format: "uri" },
        id: { type: "string", format: "uuid" },
      },
      required: ["short", "long", "when", "day", "mail", "link", "id"],
    },
  ],
  [
    "array sizes and tuples",
    {
      type: "object",
      properties: {
        three: { type: "array", items: { type: "integer" }, minItems: 3 },
        none: { type: "array", items: { type: "string" }, maxItems: 0 },
        pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false },
        anything: { type: "array" },
      },
      required: ["three", "none", "pair", "anything"],
    },
  ],
  [
    "const and enums of other types",
    {
      type: "object",
      properties: { version: { const: 2 }, size: { enum: [10, 20] }, flag: { enum: [true] }, obj: { const: { a: 1 } } },
      required: ["version", "size", "flag", "obj"],
    },
  ],
  [
    "additionalProperties schema and a required field outside properties",
    {
      type: "object",
      properties: { known: { type: "string" } },
      additionalProperties: { type: "integer" },
      required: ["known", "extra", "constructor"],
    },
  ],
  ["a bare string", { type: "string" }],
  ["an array of strings at the top", { type: "array", items: { type: "string" } }],
  ["an empty schema", {}],
];

describe("buildSchemaInstance", () => {
  it.each(SPREAD)("makes a valid instance of %s", (_name, schema) => {
    expectValid(schema, buildSchemaInstance(schema, { text: TEXT }));
  });

  it("puts the text in string fields and follows the documented defaults", () => {
    const schema = SPREAD[0]![1];
    expect(buildSchemaInstance(schema, { text: TEXT })).toEqual({
      answer: TEXT,
      score: 0,
      count: 0,
      ok: false,
      level: "low",
      nothing: null,
    });
  });

  it("uses minimums, cuts and pads strings, and makes one array item", () => {
    const numbers = buildSchemaInstance(SPREAD[9]![1], { text: TEXT });
    expect(numbers).toMatchObject({ min3: 3, positiveInt: 1, negative: -5, step: 10, decimal: 2.5, ceiling: 3 });
    const strings = buildSchemaInstance(SPREAD[10]![1], { text: TEXT }) as Record<string, string>;
    expect(strings.short).toBe("You a");
    expect(strings.long).toHaveLength(200);
    expect(strings.long?.startsWith(TEXT)).toBe(true);
    const arrays = buildSchemaInstance(SPREAD[11]![1], { text: TEXT });
    expect(arrays).toEqual({ three: [0, 0, 0], none: [], pair: [TEXT, 0], anything: [TEXT] });
  });

  it("ends recursion: optional back-references are left out, required ones take the finite branch", () => {
    expect(buildSchemaInstance(SPREAD[3]![1], { text: "t" })).toEqual({ label: "t", children: [] });
    expect(buildSchemaInstance(SPREAD[4]![1], { text: "t" })).toEqual({ value: "t", next: null });
    expect(buildSchemaInstance(SPREAD[5]![1], { text: "t" })).toEqual({ name: "t" });
  });

  it("takes the first oneOf branch", () => {
    expect(buildSchemaInstance(SPREAD[6]![1], { text: "t" })).toEqual({ kind: "circle", r: 1 });
  });

  it("follows draft-07 definitions and tuple items", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      definitions: { "a/b": { type: "object", properties: { v: { type: "string", minLength: 2 } }, required: ["v"] } },
      type: "object",
      properties: {
        ref: { $ref: "#/definitions/a~1b" },
        tuple: { type: "array", items: [{ type: "boolean" }, { type: "string" }], additionalItems: false },
      },
      required: ["ref", "tuple"],
    };
    const instance = buildSchemaInstance(schema, { text: "x" });
    expect(instance).toEqual({ ref: { v: "x." }, tuple: [false, "x"] });
    expectValid(schema, instance, ajv07);
  });

  it("uses top-level values whose type fits, and makes up the rest", () => {
    const schema = {
      type: "object",
      properties: {
        city: { type: "string" },
        days: { type: "integer" },
        unit: { enum: ["C", "F"] },
        nested: { type: "object", properties: { city: { type: "string" } } },
      },
      required: ["city", "days", "unit", "nested"],
    };
    const instance = buildSchemaInstance(schema, {
      text: "t",
      topLevelValues: { city: "Paris", days: "three", unit: "F", other: 1 },
    });
    expect(instance).toEqual({ city: "Paris", days: 0, unit: "F", nested: { city: "t" } });
    expectValid(schema, instance);
  });

  it("refuses a schema that admits nothing", () => {
    expect(() =>
      buildSchemaInstance({ type: "object", properties: { x: false }, required: ["x"] }, { text: "t" }),
    ).not.toThrow(); // a required field whose schema is false is left out: the best effort
    expect(() => buildSchemaInstance(false as unknown as JsonSchema, { text: "t" })).toThrow(/admits no value/);
    expect(() =>
      buildSchemaInstance({ $defs: { a: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" }, { text: "t" }),
    ).toThrow(/recurses/);
  });
});
