import { create } from "@bufbuild/protobuf";
import { type JsonText, JsonTextSchema } from "@kiln/proto/common";
import { AssertionSchema } from "@kiln/proto/evaluation";
import { describe, expect, it } from "vitest";
import { type Assertion, assertionFieldsOf, assertionMessage } from "./assertions.js";

const every: Assertion[] = [
  { type: "equals", value: { a: [1, null, "x"] } },
  { type: "contains", value: "" },
  { type: "regex", pattern: "^hi", flags: "i" },
  { type: "regex", pattern: "^hi" },
  { type: "json_schema", schema: true },
  { type: "json_path", path: "$.a", equals: null },
  { type: "max_latency_ms", value: 1500 },
  { type: "max_cost_usd", value: 0.25 },
  { type: "llm_judge", rubric: "polite" },
  { type: "llm_judge", rubric: "polite", model: "openai/gpt-4o-mini", threshold: 0 },
];

const wrap = (value: unknown): JsonText => create(JsonTextSchema, { json: JSON.stringify(value) });
/** Reads a JSON value as the gateway shows it: null when unset. */
const asNull = (key: string, text: JsonText | undefined) => ({
  [key]: text === undefined ? null : JSON.parse(text.json),
});

describe("assertion messages", () => {
  it("wrap only the free-form JSON values, with the caller's wrap", () => {
    const wrapped: unknown[] = [];
    const counting = (value: unknown) => {
      wrapped.push(value);
      return wrap(value);
    };
    for (const a of every) assertionMessage(a, counting);
    expect(wrapped).toStrictEqual([{ a: [1, null, "x"] }, true, null]);
  });

  it("read back every kind and field; unset optional fields are left out", () => {
    const back = every.map((a) => assertionFieldsOf(create(AssertionSchema, assertionMessage(a, wrap)), asNull));
    expect(back).toStrictEqual(every);
  });

  it("leave an unset JSON value to the caller's reader, and read no kind as undefined", () => {
    const unset = create(AssertionSchema, { kind: { case: "jsonPath", value: { path: "$.a" } } });
    expect(assertionFieldsOf(unset, asNull)).toStrictEqual({ type: "json_path", path: "$.a", equals: null });
    expect(assertionFieldsOf(unset, () => ({}))).toStrictEqual({ type: "json_path", path: "$.a" });
    expect(assertionFieldsOf(create(AssertionSchema, {}), asNull)).toBeUndefined();
  });
});
