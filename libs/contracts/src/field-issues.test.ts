import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { fieldIssuesOf, fieldOfPointer, fieldPath } from "./field-issues.js";

const validatorOf = (schema: object) =>
  new Ajv2020({ strict: false, allErrors: true, discriminator: true }).compile(schema);
const issuesOf = (schema: object, value: unknown, base: string) => {
  const validate = validatorOf(schema);
  expect(validate(value)).toBe(false);
  return fieldIssuesOf(validate.errors ?? [], base, value);
};

describe("fieldPath", () => {
  it("joins keys with dots and indices in brackets, a key alone without a base", () => {
    expect(fieldPath("a", "b")).toBe("a.b");
    expect(fieldPath("a", 2)).toBe("a[2]");
    expect(fieldPath("", "b")).toBe("b");
  });
});

describe("fieldOfPointer", () => {
  it("names object keys with dots and array indices with brackets", () => {
    const root = { properties: { list: { enum: ["a", "b"] } }, "0": { x: 1 } };
    expect(fieldOfPointer("s", "/properties/list/enum/1", root)).toBe("s.properties.list.enum[1]");
    expect(fieldOfPointer("s", "/0/x", root)).toBe("s.0.x");
    expect(fieldOfPointer("s", "/a~1b/c~0d", {})).toBe("s.a/b.c~d");
    expect(fieldOfPointer("s", "", root)).toBe("s");
  });

  it("takes a whole number for an index when the value is not at hand", () => {
    expect(fieldOfPointer("", "/prompts/1/variables/city")).toBe("prompts[1].variables.city");
    expect(fieldOfPointer("", "/0")).toBe("[0]");
  });

  it("does not take what an object's prototype holds for its value", () => {
    expect(fieldOfPointer("v", "/constructor/0", {})).toBe("v.constructor[0]");
  });
});

describe("fieldIssuesOf", () => {
  const schema = {
    type: "object",
    properties: {
      city: { type: "string", maxLength: 3 },
      days: { type: "array", items: { type: "integer" }, maxItems: 2 },
      unit: { enum: ["c", "f", 1, null] },
    },
    required: ["city"],
    additionalProperties: false,
  };

  it("names missing, unknown and wrong fields under the base, in the platform's words", () => {
    expect(issuesOf(schema, { days: [1, "x", 3], unit: "k", extra: true }, "variables")).toEqual([
      { field: "variables.city", issue: "is required" },
      { field: "variables.extra", issue: "is not allowed" },
      { field: "variables.days", issue: "must hold at most 2 items" },
      { field: "variables.days[1]", issue: "must be integer" },
      { field: "variables.unit", issue: 'must be one of "c", "f", 1, null' },
    ]);
    expect(issuesOf(schema, { city: "Oslo" }, "input")).toEqual([
      { field: "input.city", issue: "must be at most 3 characters" },
    ]);
  });

  it("names a key that looks like an index as a key, and an array's index in brackets", () => {
    const numbered = { type: "object", properties: { "0": { type: "string" }, list: { items: { type: "string" } } } };
    expect(issuesOf(numbered, { "0": 1, list: [2] }, "variables")).toEqual([
      { field: "variables.0", issue: "must be string" },
      { field: "variables.list[0]", issue: "must be string" },
    ]);
  });

  it("leaves out an if's own error and repeats no issue", () => {
    const conditional = {
      if: { properties: { kind: { const: "a" } } },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a promise.
      then: { required: ["a"] },
      anyOf: [{ required: ["b"] }, { required: ["b"] }],
    };
    expect(issuesOf(conditional, { kind: "a" }, "")).toEqual([
      { field: "b", issue: "is required" },
      { field: "", issue: "must match a schema in anyOf" },
      { field: "a", issue: "is required" },
    ]);
  });

  it("names a discriminator's tag", () => {
    const tagged = {
      type: "object",
      discriminator: { propertyName: "type" },
      required: ["type"],
      oneOf: [{ properties: { type: { const: "a" } } }, { properties: { type: { const: "b" } } }],
    };
    expect(issuesOf(tagged, { type: "c" }, "body")).toEqual([{ field: "body.type", issue: "is not a known type" }]);
  });
});
