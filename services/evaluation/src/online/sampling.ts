/**
 * Which runs and generations an online rule scores (domain/run-sample.ts decides for every rule
 * kind that samples production runs).
 */
import { type CompletedRun, inSample, isProductionRun, runMatches } from "../domain/run-sample.js";
import type { OnlineRuleDoc } from "./online-store.js";

export { type CompletedRun, sampleValue } from "../domain/run-sample.js";

export const isSampled = (rule: Pick<OnlineRuleDoc, "_id" | "sampleRate">, targetKey: string): boolean =>
  inSample(rule._id, targetKey, rule.sampleRate);

/** Whether a run rule matches the run: its kind and id, and its label when the rule names one. */
export const ruleMatchesRun = (rule: OnlineRuleDoc, run: CompletedRun): boolean =>
  rule.target.kind !== "traces" && runMatches(rule.target, run);

/** Runs never scored: judge calls and runs an evaluation made. */
export const isScorableRun = isProductionRun;
