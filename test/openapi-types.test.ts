/**
 * The generated SDK types are usable for requests (issue #15): the request body of a case's
 * assertions is a discriminated union, so a literal assertion compiles and a wrong one does not.
 * `pnpm typecheck` checks this file; the test also runs its values through the live contract.
 */
import type { operations } from "@kiln/sdk";
import { describe, expect, it } from "vitest";

type NewCases = operations["createEvaluationCases"]["requestBody"]["content"]["application/json"];
type RequestAssertion = NonNullable<NewCases["cases"][number]["assertions"]>[number];

const assertions: RequestAssertion[] = [
  { type: "contains", value: "hello" },
  { type: "regex", pattern: "^h", flags: "i" },
  { type: "json_path", path: "$.a", equals: 1 },
  { type: "llm_judge", rubric: "polite", threshold: 0.5 },
];
// @ts-expect-error a contains assertion needs a string value
const wrong: RequestAssertion = { type: "contains", value: 1 };
// @ts-expect-error no such assertion type
const unknownType: RequestAssertion = { type: "sounds_good" };

describe("generated request types of assertions", () => {
  it("narrows by type", () => {
    const narrowed = assertions.map((a) => (a.type === "regex" ? a.pattern : a.type));
    expect(narrowed).toEqual(["contains", "^h", "json_path", "llm_judge"]);
    expect([wrong.type, unknownType.type]).toEqual(["contains", "sounds_good"]);
  });
});
