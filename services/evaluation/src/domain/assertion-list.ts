/**
 * A list of assertions that applies to many outputs at once (an online rule's, a prompt
 * evaluation's): 1 to 20, bounded in bytes as a case's are, each checked as a case's assertion.
 */
import type { Assertion } from "@kiln/contracts/assertions";
import type { FieldIssue } from "@kiln/kit/errors";
import { bytesText, LIMITS } from "@kiln/kit/limits";
import { checkAssertions } from "./assertions.js";

/** Most assertions in one such list. */
export const MAX_LISTED_ASSERTIONS = 20;

/** The assertions checked, their issues (on `field`) added to `issues`. */
export function checkAssertionList(values: unknown[], issues: FieldIssue[], field = "assertions"): Assertion[] {
  if (values.length === 0) issues.push({ field, issue: "must hold at least one assertion" });
  if (values.length > MAX_LISTED_ASSERTIONS)
    issues.push({ field, issue: `must hold at most ${MAX_LISTED_ASSERTIONS}` });
  if (Buffer.byteLength(JSON.stringify(values), "utf8") > LIMITS.assertionsBytes)
    issues.push({ field, issue: `must be at most ${bytesText(LIMITS.assertionsBytes)} as JSON` });
  const checked = checkAssertions(values, field);
  issues.push(...checked.issues);
  return checked.assertions;
}
