/**
 * Which production runs a rule takes: online evaluation rules (online/) and annotation queues'
 * auto-add rules (review/) decide the same way. The decision is a hash of (rule id, target), never
 * a random draw: a run.completed the bus delivers again is sampled the same way, so a run is never
 * taken twice nor newly skipped, and every replica agrees.
 */
import { createHash } from "node:crypto";
import type { RunCompletedEvent } from "@kiln/contracts/events";

/** A number in [0, 1) fixed by the rule and the target key. */
export function sampleValue(ruleId: string, targetKey: string): number {
  return createHash("sha256").update(`${ruleId}\n${targetKey}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** Whether the target falls in the rule's sample of `rate` (0 to 1). */
export const inSample = (ruleId: string, targetKey: string, rate: number): boolean =>
  sampleValue(ruleId, targetKey) < rate;

/**
 * What the rules read of a run.completed (docs/events/run.completed.schema.json); `label` and
 * `evaluationRunId` (set on the runs an evaluation made: a case's skill run, an llm_judge call) may
 * be absent from an event published before they were.
 */
export type CompletedRun = Pick<
  RunCompletedEvent,
  "runId" | "kind" | "organizationId" | "status" | "promptId" | "skillId" | "agentId"
> &
  Partial<Pick<RunCompletedEvent, "label" | "evaluationRunId">>;

/** What a rule takes runs of: a prompt, skill or agent, and only through `label` when not "". */
export interface RunTarget {
  kind: string;
  id: string;
  label: string;
}

/** Whether the run is one of the target's: its kind and id, and its label when the target names one. */
export function runMatches(target: RunTarget, run: CompletedRun): boolean {
  const { kind, id, label } = target;
  if (kind !== run.kind) return false;
  const runTarget = kind === "prompt" ? run.promptId : kind === "skill" ? run.skillId : run.agentId;
  return runTarget === id && (label === "" || label === (run.label ?? ""));
}

/** Production traffic: not a judge call, not a run an evaluation made (no loops, no double grading). */
export const isProductionRun = (run: CompletedRun): boolean => run.kind !== "judge" && !run.evaluationRunId;
