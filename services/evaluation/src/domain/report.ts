/**
 * An evaluation run's report (api.md "Evaluations"): outcomes per case and target, the change
 * from published (before) to draft (after), the summary and contract validity. Pure: completing a
 * run twice computes the same report.
 */
import type { AssertionResult } from "./assertions.js";
import { conformanceOf } from "./json-schema.js";
import { canonicalJson } from "./json-value.js";
import { addUsage, type Usage } from "./usage.js";

export type Outcome = "pass" | "fail" | "error";
export type Change = "unchanged" | "fixed" | "regressed" | "output_changed";
/** A target: "draft", "published", or a label of the skill (docs/labels.md). */
export type Label = string;

/**
 * Which two targets a run's change summary compares: with exactly two, the baseline is the live
 * one ("published" or "production") if either is there, else the first named; the candidate is
 * the other. Draft against published compares as before: published → draft.
 */
export function comparedTargets<T extends { label: Label }>(
  targets: readonly T[],
): { baseline: T; candidate: T } | null {
  if (targets.length !== 2) return null;
  const baseline = targets.find((t) => t.label === "published" || t.label === "production") ?? targets[0];
  const candidate = targets.find((t) => t !== baseline);
  return baseline && candidate ? { baseline, candidate } : null;
}
/** Over a case's attempts on one target: every one passed, none did, or some did. */
export type Verdict = "passed" | "failed" | "flaky";

/**
 * The pass-rate change that makes a case regressed (a drop from published to draft of at least
 * this much) or fixed (a rise of at least this much). With one attempt per case pass rates are 0
 * or 1, so this is the plain pass/fail comparison.
 */
export const CHANGE_THRESHOLD = 0.25;

export type { Usage } from "./usage.js";

/** One llm_judge call: its stored run and what it cost. */
export interface JudgeRun {
  runId: string;
  usage: Usage;
  /** null when the judge's model has no price. */
  estimatedCostUsd: number | null;
}

export interface RunOutput {
  text: string;
  json?: unknown;
}

/** One attempt of a case on one target. */
export interface AttemptResult {
  outcome: Outcome;
  runId: string | null;
  output: RunOutput | null;
  assertions: AssertionResult[];
  /** null when there was no output to check. */
  contractValid: boolean | null;
  latencyMs: number;
  estimatedCostUsd: number | null;
  /** The run's tokens; null when no run was stored. */
  usage: Usage | null;
  /** The llm_judge calls that graded this attempt. */
  judgeRuns: JudgeRun[];
  error?: { code: string; message: string };
}

/** An attempt as the report lists it under `attempts`. */
export interface AttemptSummary {
  /** 1-based. */
  attempt: number;
  outcome: Outcome;
  runId: string | null;
  latencyMs: number;
  estimatedCostUsd: number | null;
  usage: Usage | null;
  judgeRuns: JudgeRun[];
}

/**
 * One case on one target, as the report shows it: the first attempt's run, output, assertions,
 * contract check, latency and cost; `outcome` over every attempt ("pass" when all passed, "error"
 * when none could run, else "fail"); every attempt in `attempts`.
 */
export interface TargetResult extends AttemptResult {
  attempts: AttemptSummary[];
  /** Passing attempts / attempts. */
  passRate: number;
  verdict: Verdict;
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

export function verdictOf(passRate: number): Verdict {
  if (passRate >= 1) return "passed";
  return passRate <= 0 ? "failed" : "flaky";
}

/** A case on one target from its attempts (at least one), in attempt order. */
export function combineAttempts(attempts: AttemptResult[]): TargetResult {
  const [first] = attempts;
  if (!first) throw new Error("a target result needs at least one attempt");
  const passes = attempts.filter((a) => a.outcome === "pass").length;
  const passRate = passes / attempts.length;
  const outcome: Outcome =
    passes === attempts.length ? "pass" : attempts.every((a) => a.outcome === "error") ? "error" : "fail";
  return {
    ...first,
    outcome,
    attempts: attempts.map((a, i) => ({
      attempt: i + 1,
      outcome: a.outcome,
      runId: a.runId,
      latencyMs: a.latencyMs,
      estimatedCostUsd: a.estimatedCostUsd,
      usage: a.usage,
      judgeRuns: a.judgeRuns,
    })),
    passRate,
    verdict: verdictOf(passRate),
  };
}

/**
 * Published (before) against draft (after): fixed or regressed when the pass rate rose or dropped
 * by at least `threshold`; otherwise unchanged or output_changed by the first attempts' outputs.
 */
export function changeOf(before: TargetResult, after: TargetResult, threshold = CHANGE_THRESHOLD): Change {
  const delta = after.passRate - before.passRate;
  if (delta >= threshold) return "fixed";
  if (-delta >= threshold) return "regressed";
  return canonicalJson(before.output) === canonicalJson(after.output) ? "unchanged" : "output_changed";
}

export interface TargetSummary {
  /** Cases whose outcome is pass (every attempt passed). */
  passed: number;
  failed: number;
  errored: number;
  /** Cases whose attempts disagree (some passed). */
  flaky: number;
  /** The mean of the cases' pass rates (passed / cases with one attempt each); 0 without cases. */
  passRate: number;
  /** Attempts in all (cases × repeats when complete). */
  attempts: number;
  /** Over the attempts that produced a run; 0 when none did. */
  avgLatencyMs: number;
  latencyMs: { p50: number; p95: number; p99: number };
  /** Tokens of the skill runs and of the judges' runs. */
  usage: Usage;
  /** Skill runs and judge runs together; null when any of them is unpriced (never 0 for unknown). */
  totalCostUsd: number | null;
  /** What the priced runs cost, judges included. */
  pricedCostUsd: number;
  /** Runs (skill or judge) of a model without a price, left out of pricedCostUsd. */
  unpricedRuns: number;
  /** The llm_judge calls alone (included above). */
  judge: { runs: number; usage: Usage; estimatedCostUsd: number | null };
}

/** Nearest-rank percentile of sorted values; 0 for none. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

/** Adds costs where null (unpriced) wins, as the totals of api.md require. */
class CostTotal {
  priced = 0;
  unpriced = 0;
  add(cost: number | null): void {
    if (cost === null) this.unpriced++;
    else this.priced += cost;
  }
  get total(): number | null {
    return this.unpriced > 0 ? null : round(this.priced);
  }
}

const round = (usd: number) => Math.round(usd * 1e9) / 1e9;

export function summarizeTarget(results: TargetResult[]): TargetSummary {
  const count = (o: Outcome) => results.filter((r) => r.outcome === o).length;
  const attempts = results.flatMap((r) => r.attempts);
  const ran = attempts.filter((a) => a.runId);
  const latencies = ran.map((a) => a.latencyMs).sort((a, b) => a - b);
  let usage: Usage = { inputTokens: 0, outputTokens: 0 };
  let judgeUsage: Usage = { inputTokens: 0, outputTokens: 0 };
  const cost = new CostTotal();
  const judgeCost = new CostTotal();
  for (const a of ran) cost.add(a.estimatedCostUsd);
  for (const a of attempts) {
    if (a.usage) usage = addUsage(usage, a.usage);
    for (const j of a.judgeRuns) {
      judgeUsage = addUsage(judgeUsage, j.usage);
      judgeCost.add(j.estimatedCostUsd);
      cost.add(j.estimatedCostUsd);
    }
  }
  usage = addUsage(usage, judgeUsage);
  return {
    passed: count("pass"),
    failed: count("fail"),
    errored: count("error"),
    flaky: results.filter((r) => r.verdict === "flaky").length,
    passRate: results.length === 0 ? 0 : round(results.reduce((s, r) => s + r.passRate, 0) / results.length),
    attempts: attempts.length,
    avgLatencyMs: ran.length === 0 ? 0 : Math.round(latencies.reduce((s, l) => s + l, 0) / ran.length),
    latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99) },
    usage,
    totalCostUsd: cost.total,
    pricedCostUsd: round(cost.priced),
    unpricedRuns: cost.unpriced,
    judge: {
      runs: attempts.reduce((s, a) => s + a.judgeRuns.length, 0),
      usage: judgeUsage,
      estimatedCostUsd: judgeCost.total,
    },
  };
}
