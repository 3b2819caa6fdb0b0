/** Two reported evaluation runs compared on one target, case by case. */
import { type ChangeCounts, changesText, countChanges, type ReportResult } from "./build-report.js";
import {
  type Change,
  changeOf,
  type Label,
  type Outcome,
  type TargetResult,
  type Verdict,
  verdictOf,
} from "./report.js";

export interface ComparedRun {
  run: { _id: string; repeats?: number; targets: { label: Label; skillVersionId: string; promptVersionId?: string }[] };
  label: Label;
  results: ReportResult[];
}

export interface ComparedSide {
  outcome: Outcome;
  verdict: Verdict;
  passRate: number;
  attempts: number;
  runId: string | null;
}

/** Which run and target a side is; `promptVersionId` "" in a skill's run, `skillVersionId` "" in a prompt's. */
export interface ComparedRunInfo {
  evaluationRunId: string;
  target: Label;
  skillVersionId: string;
  promptVersionId: string;
  repeats: number;
}

export interface Comparison {
  base: ComparedRunInfo;
  head: ComparedRunInfo;
  results: { caseId: string; base: ComparedSide | null; head: ComparedSide | null; change: Change | null }[];
  summary: { changes: ChangeCounts; text: string };
}

/** Base against head on one target, case by case (head's case order, then cases only base has). */
export function compareReports(base: ComparedRun, head: ComparedRun): Comparison {
  const sideOf = (r: TargetResult | undefined): ComparedSide | null =>
    r
      ? {
          outcome: r.outcome,
          // Reports stored before repeats existed have one attempt and no verdict.
          verdict: r.verdict ?? verdictOf(r.outcome === "pass" ? 1 : 0),
          passRate: r.passRate ?? (r.outcome === "pass" ? 1 : 0),
          attempts: r.attempts?.length ?? 1,
          runId: r.runId,
        }
      : null;
  const normalized = (r: TargetResult | undefined): TargetResult | undefined =>
    r && {
      ...r,
      passRate: r.passRate ?? (r.outcome === "pass" ? 1 : 0),
      verdict: r.verdict ?? verdictOf(r.outcome === "pass" ? 1 : 0),
    };
  const baseByCase = new Map(base.results.map((r) => [r.caseId, r.byTarget[base.label]]));
  const headByCase = new Map(head.results.map((r) => [r.caseId, r.byTarget[head.label]]));
  const caseIds = [...new Set([...headByCase.keys(), ...baseByCase.keys()])];
  const pairs: Parameters<typeof countChanges>[0] = [];
  const results = caseIds.map((caseId) => {
    const before = normalized(baseByCase.get(caseId));
    const after = normalized(headByCase.get(caseId));
    const change = before && after ? changeOf(before, after) : null;
    if (change && before && after) pairs.push({ change, before, after });
    return { caseId, base: sideOf(before), head: sideOf(after), change };
  });
  const changes = countChanges(pairs);
  const sideInfo = (side: ComparedRun): ComparedRunInfo => {
    const target = side.run.targets.find((t) => t.label === side.label);
    return {
      evaluationRunId: side.run._id,
      target: side.label,
      skillVersionId: target?.skillVersionId ?? "",
      promptVersionId: target?.promptVersionId ?? "",
      repeats: side.run.repeats ?? 1,
    };
  };
  const onlyOne = results.filter((r) => r.change === null).length;
  return {
    base: sideInfo(base),
    head: sideInfo(head),
    results,
    summary: {
      changes,
      text:
        `${pairs.length} case${pairs.length === 1 ? "" : "s"} compared on ${head.label}: ${changesText(changes)}` +
        (onlyOne > 0 ? `; ${onlyOne} in one run only` : "") +
        ".",
    },
  };
}
