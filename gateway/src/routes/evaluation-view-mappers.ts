/**
 * Evaluation messages as the REST API shows them (docs/api.md "Evaluations"): unset fields become
 * null, int64 counts numbers, a JSON output's text its value.
 */
import type {
  Attempt,
  CaseResult,
  ComparedRun,
  ComparedSide,
  CompareEvaluationRunsResponse,
  ComparisonSummary,
  ContractValidity,
  EvaluationRun,
  EvaluationSummary,
  JudgeRun,
  JudgeTotals,
  LatencyPercentiles,
  RunOutput,
  TargetResult,
  TargetSummary,
  Usage,
} from "@kiln/proto/evaluation";
import { jsonValueOf } from "./evaluation-case-mappers.js";
import type { EvaluationStatus } from "./evaluation-views.js";
import { usageView as runUsageView } from "./run-view-mappers.js";
import { answersOf, iso } from "./views.js";

type Outcome = "pass" | "fail" | "error";
type Verdict = "passed" | "failed" | "flaky";
type Change = "unchanged" | "fixed" | "regressed" | "output_changed";

const { present, view } = answersOf("evaluation");

const zeroUsage = { inputTokens: 0, outputTokens: 0 };
const usageView = (u: Usage) => runUsageView(u);
const usageOrNull = (u: Usage | undefined) => (u ? usageView(u) : null);
const usageOrZero = (u: Usage | undefined) => (u ? usageView(u) : zeroUsage);

export const judgeRunView = (j: JudgeRun) => ({
  runId: j.runId,
  usage: usageOrZero(j.usage),
  estimatedCostUsd: j.estimatedCostUsd ?? null,
});

const outputView = (o: RunOutput | undefined) =>
  o ? { text: o.text, ...(o.json === undefined ? {} : { json: jsonValueOf(o.json) }) } : null;

const attemptView = (a: Attempt) => ({
  attempt: a.attempt,
  outcome: a.outcome as Outcome,
  runId: a.runId ?? null,
  latencyMs: Number(a.latencyMs),
  estimatedCostUsd: a.estimatedCostUsd ?? null,
  usage: usageOrNull(a.usage),
  judgeRuns: a.judgeRuns.map(judgeRunView),
});

export function targetResultView(r: TargetResult) {
  return {
    outcome: r.outcome as Outcome,
    runId: r.runId ?? null,
    output: outputView(r.output),
    assertions: r.assertions.map((a) => ({ type: a.type, passed: a.passed, message: a.message })),
    contractValid: r.contractValid ?? null,
    latencyMs: Number(r.latencyMs),
    estimatedCostUsd: r.estimatedCostUsd ?? null,
    usage: usageOrNull(r.usage),
    judgeRuns: r.judgeRuns.map(judgeRunView),
    ...(r.error ? { error: { code: r.error.code, message: r.error.message } } : {}),
    attempts: r.attempts.map(attemptView),
    passRate: r.passRate,
    verdict: r.verdict as Verdict,
  };
}

const caseResultView = (r: CaseResult) => ({
  caseId: r.caseId,
  byTarget: Object.fromEntries(Object.entries(r.byTarget).map(([label, t]) => [label, targetResultView(t)])),
  change: (r.change ?? null) as Change | null,
});

const changesView = (changes: EvaluationSummary["changes"]) => {
  const c = present(changes, "change counts");
  return {
    fixed: c.fixed,
    regressed: c.regressed,
    outputChanged: c.outputChanged,
    unchanged: c.unchanged,
    stillFailing: c.stillFailing,
    flaky: c.flaky,
  };
};

const latencyView = ({ p50, p95, p99 }: LatencyPercentiles) => ({ p50, p95, p99 });

const targetSummaryView = (t: TargetSummary) => ({
  passed: t.passed,
  failed: t.failed,
  errored: t.errored,
  flaky: t.flaky,
  passRate: t.passRate,
  attempts: t.attempts,
  avgLatencyMs: t.avgLatencyMs,
  latencyMs: latencyView(present(t.latencyMs, "latency percentiles")),
  usage: usageOrZero(t.usage),
  totalCostUsd: t.totalCostUsd ?? null,
  pricedCostUsd: t.pricedCostUsd,
  unpricedRuns: t.unpricedRuns,
  judge: judgeTotalsView(present(t.judge, "judge totals")),
});

const judgeTotalsView = (j: JudgeTotals) => ({
  runs: j.runs,
  usage: usageOrZero(j.usage),
  estimatedCostUsd: j.estimatedCostUsd ?? null,
});

export const summaryView = (s: EvaluationSummary) => ({
  repeats: s.repeats,
  byTarget: Object.fromEntries(Object.entries(s.byTarget).map(([label, t]) => [label, targetSummaryView(t)])),
  changes: changesView(s.changes),
  text: s.text,
});

const contractValidityView = (v: ContractValidity) => ({
  valid: v.valid,
  violations: v.violations.map((x) => ({
    ...(x.caseId === undefined ? {} : { caseId: x.caseId }),
    target: x.target,
    kind: x.kind as "output_schema",
    message: x.message,
  })),
  breakingChanges: v.breakingChanges.map((b) => ({
    kind: b.kind as "input_required_added" | "input_type_changed" | "output_field_removed" | "output_type_changed",
    path: b.path,
    message: b.message,
  })),
});

export const evaluationRunView = view("run", (run: EvaluationRun) => ({
  id: run.id,
  evaluationRunId: run.id,
  skillId: run.skillId,
  status: run.status as EvaluationStatus,
  repeats: run.repeats || 1,
  datasetId: run.datasetId || null,
  datasetVersion: run.datasetVersion || null,
  targets: run.targets.map((t) => ({ label: t.label, skillVersionId: t.skillVersionId })),
  results: run.results.map(caseResultView),
  summary: run.summary ? summaryView(run.summary) : null,
  contractValidity: run.contractValidity ? contractValidityView(run.contractValidity) : null,
  createdAt: iso(run.createdAt) ?? "",
  completedAt: iso(run.completedAt),
}));

/** A run in the list of a skill's runs: without results and contract validity. */
export const evaluationRunListItemView = (run: EvaluationRun) => {
  const { results: _results, contractValidity: _validity, ...item } = evaluationRunView(run);
  return item;
};

const comparedRunView = ({ evaluationRunId, target, skillVersionId, repeats }: ComparedRun) => ({
  evaluationRunId,
  target,
  skillVersionId,
  repeats,
});

export const comparedSideView = (s: ComparedSide | undefined) =>
  s
    ? {
        outcome: s.outcome as Outcome,
        verdict: s.verdict as Verdict,
        passRate: s.passRate,
        attempts: s.attempts,
        runId: s.runId ?? null,
      }
    : null;

export const comparisonSummaryView = (s: ComparisonSummary) => ({ changes: changesView(s.changes), text: s.text });

export function evaluationComparisonView(c: CompareEvaluationRunsResponse) {
  return {
    base: comparedRunView(present(c.base, "base run")),
    head: comparedRunView(present(c.head, "head run")),
    results: c.results.map((r) => ({
      caseId: r.caseId,
      base: comparedSideView(r.base),
      head: comparedSideView(r.head),
      change: (r.change ?? null) as Change | null,
    })),
    summary: comparisonSummaryView(present(c.summary, "comparison summary")),
  };
}

/** The 202 of a start: the run, queued (a start that answered no run is the service's fault). */
export function evaluationStarted(run: EvaluationRun | undefined) {
  const { id } = present(run, "run");
  return { id, evaluationRunId: id, status: "queued" as const };
}
