/** Checks a batch of new evaluation cases as a whole: one bad case refuses the batch. */

import type { FieldIssue } from "@kiln/kit/errors";
import { readJson } from "@kiln/kit/json-text";
import { LIMITS } from "@kiln/kit/limits";
import { checkAssertions } from "./assertions.js";
import { isPlainObject } from "./json-value.js";

export const MAX_CASES_PER_BATCH = LIMITS.casesPerRequest;
export const MAX_CASE_NAME_LENGTH = LIMITS.nameChars;

export interface NewCaseInput {
  name?: string;
  /** The input's JSON text; undefined when none was sent. */
  inputJson?: string;
  /** Undefined when the case has no expected output. */
  expectedOutputJson?: string;
  /**
   * The assertions as JSON values (api.md's shape): a bundle's, or read from their messages. A JSON
   * field whose text could not be read holds an UnreadableJson. Undefined: none.
   */
  assertions?: unknown;
}

/** A case ready to store; its JSON stays the text it came as (kit/store encodeJson). */
export interface CheckedCase {
  name: string;
  inputJson: string;
  expectedOutputJson: string | null;
  assertionsJson: string;
}

export function checkNewCases(cases: NewCaseInput[]): { cases: CheckedCase[]; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  if (cases.length === 0) issues.push({ field: "cases", issue: "must hold at least one case" });
  if (cases.length > MAX_CASES_PER_BATCH)
    issues.push({ field: "cases", issue: `must hold at most ${MAX_CASES_PER_BATCH} cases` });
  const checked = cases.map((c, i): CheckedCase => {
    const at = `cases[${i}]`;
    const name = (c.name ?? "").trim();
    if (name.length > MAX_CASE_NAME_LENGTH)
      issues.push({ field: `${at}.name`, issue: `must be at most ${MAX_CASE_NAME_LENGTH} characters` });
    const input = c.inputJson === undefined || c.inputJson === "" ? undefined : readJson(c.inputJson);
    if (input !== undefined && !input.ok && input.issue.startsWith("is nested"))
      issues.push({ field: `${at}.input`, issue: input.issue });
    else if (!input?.ok || !isPlainObject(input.value))
      issues.push({ field: `${at}.input`, issue: "must be a JSON object" });
    if (c.expectedOutputJson !== undefined) {
      const expected = readJson(c.expectedOutputJson);
      if (!expected.ok) issues.push({ field: `${at}.expectedOutput`, issue: expected.issue });
    }
    const assertions = c.assertions ?? [];
    issues.push(...checkAssertions(assertions, `${at}.assertions`).issues);
    return {
      name,
      inputJson: c.inputJson ?? "",
      expectedOutputJson: c.expectedOutputJson ?? null,
      assertionsJson: JSON.stringify(assertions),
    };
  });
  return { cases: issues.length === 0 ? checked : [], issues };
}
