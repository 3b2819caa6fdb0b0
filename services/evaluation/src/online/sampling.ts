/**
 * Which runs and generations a rule scores. The decision is a hash of (rule id, target), never a
 * random draw: a run.completed the bus delivers again is sampled the same way, so it is never
 * scored twice nor newly skipped, and every replica agrees.
 */
import { createHash } from "node:crypto";
import type { OnlineRuleDoc } from "./online-store.js";

/** A number in [0, 1) fixed by the rule and the target key. */
export function sampleValue(ruleId: string, targetKey: string): number {
  return createHash("sha256").update(`${ruleId}\n${targetKey}`).digest().readUInt32BE(0) / 2 ** 32;
}

export const isSampled = (rule: Pick<OnlineRuleDoc, "_id" | "sampleRate">, targetKey: string): boolean =>
  sampleValue(rule._id, targetKey) < rule.sampleRate;

/** What a run.completed says of the run (docs/events/run.completed.schema.json). */
export interface CompletedRun {
  runId: string;
  kind: string;
  organizationId: string;
  status: string;
  promptId: string;
  skillId: string;
  agentId: string;
  label?: string;
  /** Set on a skill run an evaluation made (once execution records it). */
  evaluationRunId?: string;
}

/** Whether a run rule matches the run: its kind and id, and its label when the rule names one. */
export function ruleMatchesRun(rule: OnlineRuleDoc, run: CompletedRun): boolean {
  const { kind, id, label } = rule.target;
  if (kind === "traces" || kind !== run.kind) return false;
  const runTarget = kind === "prompt" ? run.promptId : kind === "skill" ? run.skillId : run.agentId;
  return runTarget === id && (label === "" || label === (run.label ?? ""));
}

/** Runs never scored: judge calls and runs an evaluation made (no scoring loops, no double grading). */
export const isScorableRun = (run: CompletedRun): boolean => run.kind !== "judge" && !run.evaluationRunId;
