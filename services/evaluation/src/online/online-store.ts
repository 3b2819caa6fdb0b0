/**
 * Where online evaluation keeps its rules and scores (docs/observability.md "Online evaluation"):
 * in the evaluation store, scoped by organization. A score is unique per (rule, target), so a job
 * the bus delivers twice stores one score.
 */
import type { Assertion } from "@kiln/contracts/assertions";
import type { Collection, Store } from "@kiln/kit/store";
import type { JudgeRun } from "../domain/report.js";

export const TARGET_KINDS = ["prompt", "skill", "agent", "traces"] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

export interface TraceFilterDoc {
  name: string;
  model: string;
  sessionId: string;
}

export interface OnlineRuleDoc {
  _id: string;
  organizationId: string;
  name: string;
  target: { kind: TargetKind; id: string; label: string; filter: TraceFilterDoc | null };
  sampleRate: number;
  assertions: Assertion[];
  enabled: boolean;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface OnlineScoreDoc {
  _id: string;
  organizationId: string;
  ruleId: string;
  /** The run id, or `<traceId>:<spanId>` of a generation: one score per (ruleId, targetKey). */
  targetKey: string;
  targetType: "run" | "generation";
  runId: string;
  traceId: string;
  spanId: string;
  promptId: string;
  skillId: string;
  agentId: string;
  versionId: string;
  label: string;
  passed: boolean;
  /** Mean llm_judge score; null without a judge (or when none could grade). */
  score: number | null;
  /** The assertion results (type, passed, message) as JSON text. */
  assertionsJson: string;
  judgeRuns: JudgeRun[];
  judgeCostUsd: number | null;
  runCostUsd: number | null;
  /** When the scored run completed (the generation ended): what the summary buckets by. */
  occurredAt: Date;
  createdAt: Date;
}

/**
 * That a (rule, target) has its score, keyed `<ruleId>:<targetKey>`: a scorer's look-up before it
 * judges reads one document by `_id` (FerretDB pushes down nothing else, so a look-up on the
 * scores' own fields would read them all). Written after the score; the scores' unique index
 * stays the guard.
 */
export interface ScoredKeyDoc {
  _id: string;
  /** When the score was stored: the key goes with it (retention.ts). */
  createdAt: Date;
}

export interface OnlineCollections {
  rules: Collection<OnlineRuleDoc>;
  scores: Collection<OnlineScoreDoc>;
  scored: Collection<ScoredKeyDoc>;
}

export function onlineCollections(store: Store): OnlineCollections {
  return {
    rules: store.collection<OnlineRuleDoc>("online_rules"),
    scores: store.collection<OnlineScoreDoc>("online_scores"),
    scored: store.collection<ScoredKeyDoc>("online_scored_keys"),
  };
}

export async function ensureOnlineIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("online_rules", [{ keys: { organizationId: 1, _id: -1 } }]);
  await store.ensureIndexes("online_scores", [
    { keys: { ruleId: 1, targetKey: 1 }, unique: true },
    { keys: { organizationId: 1, _id: -1 } },
    { keys: { organizationId: 1, occurredAt: 1 } },
  ]);
}
