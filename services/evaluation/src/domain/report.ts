/**
 * An evaluation run's report (api.md "Evaluations"): outcomes per case and target, the change
 * from published (before) to draft (after), the summary and contract validity. Pure: completing a
 * run twice computes the same report.
 */
import type { AssertionResult } from "./assertions.js";
import { type BreakingChange, breakingChangesOf } from "./breaking-changes.js";
import { conformanceOf } from "./json-schema.js";
import { canonicalJson } from "./json-value.js";

export type Outcome = "pass" | "fail" | "error";
export type Change = "unchanged" | "fixed" | "regressed" | "output_changed";
export type Label = "draft" | "published";

export interface RunOutput {
  text: string;
  json?: unknown;
}

/** One case on one target, as the report shows it. */
export interface TargetResult {
  outcome: Outcome;
  runId: string | null;
  output: RunOutput | null;
  assertions: AssertionResult[];
  /** null when there was no output to check. */
  contractValid: boolean | null;
  latencyMs: number;
  estimatedCostUsd: number | null;
  error?: { code: string; message: string };
}

/** "error" when the case could not run or the run failed; else "pass" when every assertion passed. */
export function outcomeOf(ran: boolean, assertions: AssertionResult[]): Outcome {
  if (!ran) return "error";
  return assertions.every((a) => a.passed) ? "pass" : "fail";
}

/**
 * Does the output conform to the version's output schema? JSON outputs are validated as JSON,
 * text outputs as a string (a text skill's schema is `{type: "string"}`).
 */
export function contractCheckOf(
  outputSchema: unknown,
  output: RunOutput | null,
): { contractValid: boolean | null; message: string | null } {
  if (!output) return { contractValid: null, message: null };
  const conformance = conformanceOf(outputSchema, output.json !== undefined ? output.json : output.text);
  return conformance.valid
    ? { contractValid: true, message: null }
    : { contractValid: false, message: `the output does not conform to the output schema: ${conformance.message}` };
}

const passing = (o: Outcome) => o === "pass";

export function changeOf(before: TargetResult, after: TargetResult): Change {
  if (!passing(before.outcome) && passing(after.outcome)) return "fixed";
  if (passing(before.outcome) && !passing(after.outcome)) return "regressed";
  return canonicalJson(before.output) === canonicalJson(after.output) ? "unchanged" : "output_changed";
}

export interface TargetSummary {
  passed: number;
  failed: number;
  errored: number;
  /** passed / cases, 0 when there is no case. */
  passRate: number;
  /** Over the cases that produced a run; 0 when none did. */
  avgLatencyMs: number;
  /** null when a run's cost is unknown (a model without a price), never 0 for unknown. */
  totalCostUsd: number | null;
}

export function summarizeTarget(results: TargetResult[]): TargetSummary {
  const count = (o: Outcome) => results.filter((r) => r.outcome === o).length;
  const ran = results.filter((r) => r.runId);
  let totalCostUsd: number | null = 0;
  for (const r of ran)
    totalCostUsd = totalCostUsd === null || r.estimatedCostUsd === null ? null : totalCostUsd + r.estimatedCostUsd;
  return {
    passed: count("pass"),
    failed: count("fail"),
    errored: count("error"),
    passRate: results.length === 0 ? 0 : count("pass") / results.length,
    avgLatencyMs: ran.length === 0 ? 0 : Math.round(ran.reduce((s, r) => s + r.latencyMs, 0) / ran.length),
    totalCostUsd,
  };
}

export interface ReportTarget {
  label: Label;
  skillVersionId: string;
  inputSchema: unknown;
  outputSchema: unknown;
}

export interface CaseResults {
  caseId: string;
  byTarget: Partial<Record<Label, TargetResult>>;
}

export interface ReportResult {
  caseId: string;
  byTarget: Partial<Record<Label, TargetResult>>;
  change: Change | null;
}

export interface Report {
  results: ReportResult[];
  summary: {
    byTarget: Partial<Record<Label, TargetSummary>>;
    changes: { fixed: number; regressed: number; outputChanged: number; unchanged: number };
    text: string;
  };
  contractValidity: {
    valid: boolean;
    violations: { caseId?: string; target: Label; kind: "output_schema"; message: string }[];
    breakingChanges: BreakingChange[];
  };
}

/** The report of a run whose results are all in; `cases` in case creation order. */
export function buildReport(
  targets: ReportTarget[],
  cases: CaseResults[],
  violationMessages: Map<string, string>,
): Report {
  const draft = targets.find((t) => t.label === "draft");
  const published = targets.find((t) => t.label === "published");
  const compare = draft !== undefined && published !== undefined;
  const results: ReportResult[] = cases.map((c) => {
    const before = c.byTarget.published;
    const after = c.byTarget.draft;
    return {
      caseId: c.caseId,
      byTarget: c.byTarget,
      change: compare && before && after ? changeOf(before, after) : null,
    };
  });
  const byTarget: Report["summary"]["byTarget"] = {};
  for (const t of targets) {
    byTarget[t.label] = summarizeTarget(cases.flatMap((c) => c.byTarget[t.label] ?? []));
  }
  const changeCount = (change: Change) => results.filter((r) => r.change === change).length;
  const changes = {
    fixed: changeCount("fixed"),
    regressed: changeCount("regressed"),
    outputChanged: changeCount("output_changed"),
    unchanged: changeCount("unchanged"),
  };
  const violations: Report["contractValidity"]["violations"] = [];
  for (const c of cases) {
    for (const t of targets) {
      const r = c.byTarget[t.label];
      if (r?.contractValid === false) {
        violations.push({
          caseId: c.caseId,
          target: t.label,
          kind: "output_schema",
          message:
            violationMessages.get(`${c.caseId}:${t.label}`) ?? "the output does not conform to the output schema",
        });
      }
    }
  }
  const breakingChanges = compare ? breakingChangesOf(published, draft) : [];
  return {
    results,
    summary: {
      byTarget,
      changes,
      text: summaryText(targets, cases.length, byTarget, compare ? changes : null, breakingChanges.length),
    },
    contractValidity: { valid: violations.length === 0 && breakingChanges.length === 0, violations, breakingChanges },
  };
}

function summaryText(
  targets: ReportTarget[],
  caseCount: number,
  byTarget: Report["summary"]["byTarget"],
  changes: Report["summary"]["changes"] | null,
  breakingCount: number,
): string {
  const cases = `${caseCount} case${caseCount === 1 ? "" : "s"}`;
  const perTarget = targets
    .map((t) => {
      const s = byTarget[t.label];
      return s ? `${t.label} ${s.passed}/${caseCount} passed${s.errored > 0 ? ` (${s.errored} errored)` : ""}` : "";
    })
    .join(", ");
  const changed = changes
    ? `; ${changes.fixed} fixed, ${changes.regressed} regressed, ${changes.outputChanged} output changed, ${changes.unchanged} unchanged` +
      (breakingCount > 0 ? `; ${breakingCount} breaking contract change${breakingCount === 1 ? "" : "s"}` : "")
    : "";
  return `${cases}: ${perTarget}${changed}.`;
}
