/**
 * A run's report as stored (results, summary and contract validity as JSON text), read back in
 * the report's current shape. Reports stored before repeats, judge costs and latency percentiles
 * existed lack those fields: each gets the value it would have had (one attempt, no judge, every
 * percentile the average), here and nowhere else.
 */

import type { ChangeCounts, Report, ReportResult } from "../domain/build-report.js";
import type { JudgeRun, TargetResult, TargetSummary } from "../domain/report.js";
import { verdictOf } from "../domain/report.js";

/** A case on one target as older reports stored it. */
type StoredTargetResult = Omit<TargetResult, "attempts" | "passRate" | "verdict" | "judgeRuns"> &
  Partial<Pick<TargetResult, "attempts" | "passRate" | "verdict" | "judgeRuns">>;

interface StoredResult {
  caseId: string;
  byTarget: Partial<Record<string, StoredTargetResult>>;
  change?: ReportResult["change"];
}

/** A target's summary as older reports stored it. */
type StoredTargetSummary = Pick<TargetSummary, "passed" | "failed" | "errored" | "passRate" | "avgLatencyMs"> &
  Partial<Omit<TargetSummary, "passed" | "failed" | "errored" | "passRate" | "avgLatencyMs">>;

interface StoredSummary {
  repeats?: number;
  byTarget?: Partial<Record<string, StoredTargetSummary>>;
  changes: Omit<ChangeCounts, "stillFailing" | "flaky"> & Partial<Pick<ChangeCounts, "stillFailing" | "flaky">>;
  text: string;
}

function targetResultOf(r: StoredTargetResult): TargetResult {
  const passRate = r.passRate ?? (r.outcome === "pass" ? 1 : 0);
  const judgeRuns: JudgeRun[] = r.judgeRuns ?? [];
  return {
    ...r,
    judgeRuns,
    attempts: r.attempts ?? [
      {
        attempt: 1,
        outcome: r.outcome,
        runId: r.runId,
        latencyMs: r.latencyMs,
        estimatedCostUsd: r.estimatedCostUsd,
        usage: r.usage,
        judgeRuns,
      },
    ],
    passRate,
    verdict: r.verdict ?? verdictOf(passRate),
  };
}

/** The results of a stored report (`resultsJson`), in case order. */
export function resultsOf(resultsJson: string): ReportResult[] {
  const stored = JSON.parse(resultsJson) as StoredResult[];
  return stored.map((r) => {
    const byTarget: Partial<Record<string, TargetResult>> = {};
    for (const [label, t] of Object.entries(r.byTarget)) if (t) byTarget[label] = targetResultOf(t);
    return { caseId: r.caseId, byTarget, change: r.change ?? null };
  });
}

function targetSummaryOf(t: StoredTargetSummary): TargetSummary {
  const zeroUsage = { inputTokens: 0, outputTokens: 0 };
  const avg = t.avgLatencyMs;
  return {
    passed: t.passed,
    failed: t.failed,
    errored: t.errored,
    flaky: t.flaky ?? 0,
    passRate: t.passRate,
    attempts: t.attempts ?? t.passed + t.failed + t.errored,
    avgLatencyMs: avg,
    latencyMs: t.latencyMs ?? { p50: avg, p95: avg, p99: avg },
    usage: t.usage ?? zeroUsage,
    totalCostUsd: t.totalCostUsd ?? null,
    pricedCostUsd: t.pricedCostUsd ?? t.totalCostUsd ?? 0,
    unpricedRuns: t.unpricedRuns ?? 0,
    judge: t.judge ?? { runs: 0, usage: zeroUsage, estimatedCostUsd: 0 },
  };
}

/** A stored summary (`summaryJson`); null while it is "{}" (the run has not completed). */
export function summaryOf(summaryJson: string): Report["summary"] | null {
  const stored = JSON.parse(summaryJson) as StoredSummary | Record<string, never>;
  if (!("text" in stored)) return null;
  const byTarget: Partial<Record<string, TargetSummary>> = {};
  for (const [label, t] of Object.entries(stored.byTarget ?? {})) if (t) byTarget[label] = targetSummaryOf(t);
  return {
    repeats: stored.repeats ?? 1,
    byTarget,
    changes: { stillFailing: 0, flaky: 0, ...stored.changes },
    text: stored.text,
  };
}

/** A stored contract validity (`contractValidityJson`); null while it is "{}". */
export function contractValidityOf(contractValidityJson: string): Report["contractValidity"] | null {
  const { valid, violations, breakingChanges } = JSON.parse(contractValidityJson) as Partial<
    Report["contractValidity"]
  >;
  if (valid === undefined || violations === undefined || breakingChanges === undefined) return null;
  return { valid, violations, breakingChanges };
}
