import { create } from "@bufbuild/protobuf";
import { DomainError } from "@kiln/kit/errors";
import { jsonTextOf } from "@kiln/kit/json-text";
import { LIMITS } from "@kiln/kit/limits";
import { AssertionSchema, CaseContentSchema } from "@kiln/proto/evaluation";
import { describe, expect, it } from "vitest";
import type { Assertion } from "../domain/assertions.js";
import { checkNewCases } from "../domain/new-cases.js";
import { assertionToProto, assertionValueOf, newCaseOf } from "./case-conversions.js";

const every: Assertion[] = [
  { type: "equals", value: { a: [1, null, "x"], $ref: "#/k" } },
  { type: "equals", value: null },
  { type: "contains", value: "" },
  { type: "regex", pattern: "^hi", flags: "" },
  { type: "regex", pattern: "^hi" },
  { type: "json_schema", schema: true },
  { type: "json_path", path: "$.a", equals: null },
  { type: "max_latency_ms", value: 1500 },
  { type: "max_cost_usd", value: 0.25 },
  { type: "llm_judge", rubric: "polite" },
  { type: "llm_judge", rubric: "polite", model: "openai/gpt-4o-mini", threshold: 0 },
];

describe("assertion messages", () => {
  it("carry every kind and field, unset ones included, unchanged both ways", () => {
    const back = every.map((a) => assertionValueOf(create(AssertionSchema, assertionToProto(a))));
    expect(back).toStrictEqual(every);
  });

  it("are checked at the field a REST caller names; JSON that is not JSON, or no kind, is refused", () => {
    const content = create(CaseContentSchema, {
      input: jsonTextOf("{}"),
      assertions: [
        { kind: { case: "regex", value: { pattern: "([" } } },
        { kind: { case: "jsonSchema", value: { schema: jsonTextOf("{") } } },
        { kind: { case: "jsonPath", value: { path: "$.a" } } },
        {},
      ],
    });
    const { issues } = checkNewCases([newCaseOf(content, "cases[0].assertions")]);
    expect(issues.map((i) => [i.field, i.issue])).toEqual([
      ["cases[0].assertions[0].pattern", expect.any(String)],
      ["cases[0].assertions[1].schema", "is not valid JSON"],
      ["cases[0].assertions[2].equals", "is required"],
      ["cases[0].assertions[3].type", expect.stringMatching(/^must be one of equals, contains/)],
    ]);
  });

  it("are bounded all together as the REST API bounds them", () => {
    const rubric = "r".repeat(LIMITS.assertionTextChars);
    const content = create(CaseContentSchema, {
      input: jsonTextOf("{}"),
      assertions: Array.from({ length: 7 }, () => ({ kind: { case: "llmJudge" as const, value: { rubric } } })),
    });
    let refusal: unknown;
    try {
      newCaseOf(content, "evaluationCase.assertions");
    } catch (e) {
      refusal = e;
    }
    expect(refusal).toBeInstanceOf(DomainError);
    expect((refusal as DomainError).details).toEqual([
      { field: "evaluationCase.assertions", issue: "must be at most 64 KiB as JSON" },
    ]);
  });
});
