import type { EvaluationChangeCounts } from "@kiln/contracts/events";
import { type BreakingChange, breakingChangesOf } from "./breaking-changes.js";
import {
  type Change,
  changeOf,
  comparedTargets,
  type Label,
  summarizeTarget,
  type TargetResult,
  type TargetSummary,
} from "./report.js";

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

/** The counts evaluation.completed carries too (contracts/events.ts). */
export type ChangeCounts = EvaluationChangeCounts;

/** The change of each compared case, counted; `changes` beside the before/after verdicts. */
export function countChanges(pairs: { change: Change; before: TargetResult; after: TargetResult }[]): ChangeCounts {
  const count = (change: Change) => pairs.filter((p) => p.change === change).length;
  return {
    fixed: count("fixed"),
    regressed: count("regressed"),
    outputChanged: count("output_changed"),
    unchanged: count("unchanged"),
    stillFailing: pairs.filter((p) => p.before.verdict === "failed" && p.after.verdict === "failed").length,
    flaky: pairs.filter((p) => p.after.verdict === "flaky").length,
  };
}

/**
 * The changes in the words a reviewer reads in one line: the four changes, which add up to the
 * cases compared, then the still failing and flaky ones, which are among them (never read as more).
 */
export function changesText(changes: ChangeCounts): string {
  const counts = `${changes.fixed} fixed, ${changes.regressed} regressed, ${changes.outputChanged} output changed, ${changes.unchanged} unchanged`;
  const among = [
    ...(changes.stillFailing > 0 ? [`${changes.stillFailing} still failing`] : []),
    ...(changes.flaky > 0 ? [`${changes.flaky} flaky`] : []),
  ];
  return among.length > 0 ? `${counts} (${among.join(", ")} among them)` : counts;
}

export interface Report {
  results: ReportResult[];
  summary: {
    /** Attempts per case and target. */
    repeats: number;
    byTarget: Partial<Record<Label, TargetSummary>>;
    changes: ChangeCounts;
    text: string;
  };
  contractValidity: {
    valid: boolean;
    violations: { caseId?: string; target: Label; kind: "output_schema"; message: string }[];
    breakingChanges: BreakingChange[];
  };
}

/** The report of a run whose results are all in (or of a cancelled run: those it has); `cases` in case creation order. */
export function buildReport(
  targets: ReportTarget[],
  cases: CaseResults[],
  violationMessages: Map<string, string>,
  /** `noun`: what the summary counts, "case" (a skill's cases) or "item" (a prompt evaluation's dataset items). */
  options: { repeats?: number; cancelled?: boolean; noun?: "case" | "item" } = {},
): Report {
  const repeats = options.repeats ?? 1;
  const compared = comparedTargets(targets);
  const compare = compared !== null;
  const pairs: Parameters<typeof countChanges>[0] = [];
  const results: ReportResult[] = cases.map((c) => {
    const before = compared ? c.byTarget[compared.baseline.label] : undefined;
    const after = compared ? c.byTarget[compared.candidate.label] : undefined;
    const change = compare && before && after ? changeOf(before, after) : null;
    if (change && before && after) pairs.push({ change, before, after });
    return { caseId: c.caseId, byTarget: c.byTarget, change };
  });
  const byTarget: Report["summary"]["byTarget"] = {};
  for (const t of targets) {
    byTarget[t.label] = summarizeTarget(cases.flatMap((c) => c.byTarget[t.label] ?? []));
  }
  const changes = countChanges(pairs);
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
  const breakingChanges = compared ? breakingChangesOf(compared.baseline, compared.candidate) : [];
  return {
    results,
    summary: {
      repeats,
      byTarget,
      changes,
      text: summaryText(
        targets,
        cases.length,
        repeats,
        byTarget,
        compare ? changes : null,
        breakingChanges.length,
        options.cancelled === true,
        options.noun ?? "case",
      ),
    },
    contractValidity: { valid: violations.length === 0 && breakingChanges.length === 0, violations, breakingChanges },
  };
}

function summaryText(
  targets: ReportTarget[],
  caseCount: number,
  repeats: number,
  byTarget: Report["summary"]["byTarget"],
  changes: ChangeCounts | null,
  breakingCount: number,
  cancelled: boolean,
  noun: "case" | "item",
): string {
  const cases = `${caseCount} ${noun}${caseCount === 1 ? "" : "s"}${repeats > 1 ? ` × ${repeats} attempts` : ""}`;
  const perTarget = targets
    .map((t) => {
      const s = byTarget[t.label];
      if (!s) return "";
      const notes = [...(s.flaky > 0 ? [`${s.flaky} flaky`] : []), ...(s.errored > 0 ? [`${s.errored} errored`] : [])];
      return `${t.label} ${s.passed}/${caseCount} passed${notes.length > 0 ? ` (${notes.join(", ")})` : ""}`;
    })
    .join(", ");
  const changed = changes
    ? `; ${changesText(changes)}` +
      (breakingCount > 0 ? `; ${breakingCount} breaking contract change${breakingCount === 1 ? "" : "s"}` : "")
    : "";
  return `${cancelled ? "Cancelled: " : ""}${cases}: ${perTarget}${changed}.`;
}
