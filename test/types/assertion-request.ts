/**
 * The generated SDK types are usable for requests (issue #15): the request body of a case's
 * assertions is a discriminated union, so a literal assertion compiles and a wrong one does not.
 * A compile-time check only: `pnpm typecheck` (which CI runs) fails when it no longer holds,
 * including when an `@ts-expect-error` below stops finding its error.
 */
import type { operations } from "@kiln/sdk";

type NewCases = operations["createEvaluationCases"]["requestBody"]["content"]["application/json"];
type RequestAssertion = NonNullable<NewCases["cases"][number]["assertions"]>[number];

export const assertions: RequestAssertion[] = [
  { type: "contains", value: "hello" },
  { type: "regex", pattern: "^h", flags: "i" },
  { type: "json_path", path: "$.a", equals: 1 },
  { type: "llm_judge", rubric: "polite", threshold: 0.5 },
];

// Narrowing by `type` reaches each branch's own fields.
export const patterns = assertions.map((a) => (a.type === "regex" ? a.pattern : a.type));

// @ts-expect-error a contains assertion needs a string value
export const wrongValue: RequestAssertion = { type: "contains", value: 1 };
// @ts-expect-error no such assertion type
export const unknownType: RequestAssertion = { type: "sounds_good" };
