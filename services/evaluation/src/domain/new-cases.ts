/** Checks a batch of new evaluation cases as a whole: one bad case refuses the batch. */

import type { FieldIssue } from "@kiln/kit/errors";
import { LIMITS } from "@kiln/kit/limits";
import { checkAssertions } from "./assertions.js";
import { isPlainObject, tryParseJson } from "./json-value.js";

export const MAX_CASES_PER_BATCH = LIMITS.casesPerRequest;
export const MAX_CASE_NAME_LENGTH = LIMITS.nameChars;

export interface NewCaseInput {
  name?: string;
  inputJson: string;
  expectedOutputJson?: string;
  assertionsJson?: string;
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
    const input = c.inputJson === "" ? { ok: false as const } : tryParseJson(c.inputJson);
    if (!input.ok || !isPlainObject(input.value)) issues.push({ field: `${at}.input`, issue: "must be a JSON object" });
    if (c.expectedOutputJson !== undefined && !tryParseJson(c.expectedOutputJson).ok)
      issues.push({ field: `${at}.expectedOutput`, issue: "is not valid JSON" });
    let assertionsJson = "[]";
    if (c.assertionsJson !== undefined && c.assertionsJson !== "") {
      const parsed = tryParseJson(c.assertionsJson);
      if (!parsed.ok) issues.push({ field: `${at}.assertions`, issue: "is not valid JSON" });
      else {
        issues.push(...checkAssertions(parsed.value, `${at}.assertions`).issues);
        assertionsJson = c.assertionsJson;
      }
    }
    return { name, inputJson: c.inputJson, expectedOutputJson: c.expectedOutputJson ?? null, assertionsJson };
  });
  return { cases: issues.length === 0 ? checked : [], issues };
}
