/** How the evaluation screens name cases, verdicts and pass rates. */
import type { EvaluationCase } from "@kiln/sdk";

/** A case's name, else its place among the skill's cases, else (deleted since) its id. */
export function caseNamer(cases: EvaluationCase[] | null): (caseId: string) => string {
  const index = new Map((cases ?? []).map((c, i) => [c.id, c.name || `case ${i + 1}`]));
  return (caseId) => index.get(caseId) ?? `${caseId} (deleted)`;
}

export const percent = (rate: number) => `${Math.round(rate * 100)}%`;

/** "2/3 attempts passed" from a pass rate and the attempts. */
export const attemptsPassed = (passRate: number, attempts: number) =>
  `${Math.round(passRate * attempts)}/${attempts} attempt${attempts === 1 ? "" : "s"} passed`;

/** The badge class of a verdict or outcome: passed green, failed red, flaky amber. */
export function verdictClass(v: string): string {
  if (v === "passed" || v === "pass" || v === "fixed") return "badge status-succeeded";
  if (v === "flaky" || v === "output_changed") return "badge status-running";
  if (v === "failed" || v === "fail" || v === "error" || v === "regressed") return "badge status-failed";
  return "badge";
}

export const changeText = (c: string | null) => (c ? c.replace(/_/g, " ") : "—");

export const isDone = (status: string) => status === "completed" || status === "cancelled" || status === "failed";
