/**
 * An evaluation run's report and a comparison of two runs as the proto carries them. Nulls become
 * unset fields; token counts and latencies are int64 (latencies rounded to whole milliseconds).
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { optionalJsonText } from "@kiln/kit/json-text";
import type {
  AttemptSchema,
  CaseResultSchema,
  ComparedSideSchema,
  CompareEvaluationRunsResponseSchema,
  ContractValiditySchema,
  EvaluationSummarySchema,
  JudgeRunSchema,
  TargetResultSchema,
  TargetSummarySchema,
  UsageSchema,
} from "@kiln/proto/evaluation";
import type { Report, ReportResult } from "../domain/build-report.js";
import type { ComparedSide, Comparison } from "../domain/comparison.js";
import type { AttemptSummary, JudgeRun, TargetResult, TargetSummary, Usage } from "../domain/report.js";
import { usageToMessage } from "../domain/usage.js";

const usageToProto = (u: Usage): MessageInitShape<typeof UsageSchema> => usageToMessage(u);

const msToProto = (ms: number) => BigInt(Math.round(ms));

const judgeRunToProto = (j: JudgeRun): MessageInitShape<typeof JudgeRunSchema> => ({
  runId: j.runId,
  usage: usageToProto(j.usage),
  estimatedCostUsd: j.estimatedCostUsd ?? undefined,
});

function attemptToProto(a: AttemptSummary): MessageInitShape<typeof AttemptSchema> {
  return {
    attempt: a.attempt,
    outcome: a.outcome,
    runId: a.runId || undefined,
    latencyMs: msToProto(a.latencyMs),
    estimatedCostUsd: a.estimatedCostUsd ?? undefined,
    usage: a.usage ? usageToProto(a.usage) : undefined,
    judgeRuns: a.judgeRuns.map(judgeRunToProto),
  };
}

function targetResultToProto(r: TargetResult): MessageInitShape<typeof TargetResultSchema> {
  return {
    outcome: r.outcome,
    runId: r.runId || undefined,
    output: r.output ? { text: r.output.text, json: optionalJsonText(r.output.json) } : undefined,
    assertions: r.assertions.map((a) => ({ type: a.type, passed: a.passed, message: a.message })),
    contractValid: r.contractValid ?? undefined,
    latencyMs: msToProto(r.latencyMs),
    estimatedCostUsd: r.estimatedCostUsd ?? undefined,
    usage: r.usage ? usageToProto(r.usage) : undefined,
    judgeRuns: r.judgeRuns.map(judgeRunToProto),
    error: r.error ? { code: r.error.code, message: r.error.message } : undefined,
    attempts: r.attempts.map(attemptToProto),
    passRate: r.passRate,
    verdict: r.verdict,
  };
}

export function caseResultToProto(r: ReportResult): MessageInitShape<typeof CaseResultSchema> {
  const byTarget: Record<string, MessageInitShape<typeof TargetResultSchema>> = {};
  for (const [label, t] of Object.entries(r.byTarget)) if (t) byTarget[label] = targetResultToProto(t);
  return { caseId: r.caseId, byTarget, change: r.change ?? undefined };
}

function targetSummaryToProto(t: TargetSummary): MessageInitShape<typeof TargetSummarySchema> {
  return {
    ...t,
    usage: usageToProto(t.usage),
    totalCostUsd: t.totalCostUsd ?? undefined,
    judge: {
      runs: t.judge.runs,
      usage: usageToProto(t.judge.usage),
      estimatedCostUsd: t.judge.estimatedCostUsd ?? undefined,
    },
  };
}

export function summaryToProto(s: Report["summary"]): MessageInitShape<typeof EvaluationSummarySchema> {
  const byTarget: Record<string, MessageInitShape<typeof TargetSummarySchema>> = {};
  for (const [label, t] of Object.entries(s.byTarget)) if (t) byTarget[label] = targetSummaryToProto(t);
  return { repeats: s.repeats, byTarget, changes: s.changes, text: s.text };
}

export function contractValidityToProto(
  v: Report["contractValidity"],
): MessageInitShape<typeof ContractValiditySchema> {
  return { valid: v.valid, violations: v.violations, breakingChanges: v.breakingChanges };
}

const comparedSideToProto = (s: ComparedSide | null): MessageInitShape<typeof ComparedSideSchema> | undefined =>
  s ? { ...s, runId: s.runId ?? undefined } : undefined;

export function comparisonToProto(c: Comparison): MessageInitShape<typeof CompareEvaluationRunsResponseSchema> {
  return {
    base: c.base,
    head: c.head,
    results: c.results.map((r) => ({
      caseId: r.caseId,
      base: comparedSideToProto(r.base),
      head: comparedSideToProto(r.head),
      change: r.change ?? undefined,
    })),
    summary: c.summary,
  };
}
