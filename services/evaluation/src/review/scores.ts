/**
 * A queue's score set and the scores a review gives (docs/review.md "Scores"): every check names
 * the field it refuses, so a bad request is one 400 that says what to fix.
 */
import type { FieldIssue } from "@kiln/kit/errors";
import { LIMITS } from "@kiln/kit/limits";
import type { AutoAddRuleDoc, ScoreConfigDoc, ScoreDoc } from "./review-store.js";

export const SCORE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
export const MAX_SCORE_CONFIGS = LIMITS.scoresPerQueue;
export const MAX_OPTIONS = LIMITS.scoreOptions;
export const MAX_OPTION_CHARS = 100;
export const MAX_COMMENT_CHARS = LIMITS.reviewCommentChars;

export interface ScoreConfigInput {
  name: string;
  kind: string;
  min?: number;
  max?: number;
  options: string[];
  required: boolean;
}

/** The configs as stored, or the issues that refuse them (`field` names the list, e.g. "scoreConfigs"). */
export function checkScoreConfigs(
  configs: ScoreConfigInput[],
  field: string,
): { configs: ScoreConfigDoc[]; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  if (configs.length > MAX_SCORE_CONFIGS)
    issues.push({ field, issue: `must hold at most ${MAX_SCORE_CONFIGS} scores` });
  const names = new Set<string>();
  const out = configs.map((c, i): ScoreConfigDoc => {
    const at = `${field}[${i}]`;
    if (!SCORE_NAME.test(c.name)) issues.push({ field: `${at}.name`, issue: "must match ^[A-Za-z0-9_.-]{1,64}$" });
    else if (names.has(c.name)) issues.push({ field: `${at}.name`, issue: `repeats the score "${c.name}"` });
    names.add(c.name);
    if (c.kind === "numeric") {
      if (c.min === undefined || c.max === undefined || !Number.isFinite(c.min) || !Number.isFinite(c.max))
        issues.push({ field: `${at}.min`, issue: "a numeric score needs finite min and max" });
      else if (c.min >= c.max) issues.push({ field: `${at}.max`, issue: "must be greater than min" });
      return { name: c.name, kind: "numeric", min: c.min ?? 0, max: c.max ?? 0, required: c.required };
    }
    if (c.kind === "categorical") {
      const options = c.options;
      if (options.length === 0 || options.length > MAX_OPTIONS)
        issues.push({ field: `${at}.options`, issue: `must hold 1 to ${MAX_OPTIONS} options` });
      else if (new Set(options).size !== options.length)
        issues.push({ field: `${at}.options`, issue: "must not repeat an option" });
      else if (options.some((o) => o.trim() === "" || o.length > MAX_OPTION_CHARS))
        issues.push({ field: `${at}.options`, issue: `each option must be 1 to ${MAX_OPTION_CHARS} characters` });
      return { name: c.name, kind: "categorical", options, required: c.required };
    }
    if (c.kind !== "boolean")
      issues.push({ field: `${at}.kind`, issue: "must be one of boolean, numeric, categorical" });
    return { name: c.name, kind: "boolean", required: c.required };
  });
  return { configs: out, issues };
}

export interface AutoAddInput {
  kind: string;
  id: string;
  label: string;
  sampleRate: number;
}

export function checkAutoAdd(rule: AutoAddInput, field: string): { rule: AutoAddRuleDoc; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  if (rule.kind !== "prompt" && rule.kind !== "skill" && rule.kind !== "agent")
    issues.push({ field: `${field}.kind`, issue: "must be one of prompt, skill, agent" });
  if (rule.id === "" || rule.id.length > 64) issues.push({ field: `${field}.id`, issue: "is required" });
  if (rule.label.length > LIMITS.nameChars)
    issues.push({ field: `${field}.label`, issue: `must be at most ${LIMITS.nameChars} characters` });
  if (!(rule.sampleRate >= 0 && rule.sampleRate <= 1))
    issues.push({ field: `${field}.sampleRate`, issue: "must be from 0 to 1" });
  return { rule: { ...rule, kind: rule.kind as AutoAddRuleDoc["kind"] }, issues };
}

/** The scores as stored, checked against the queue's set: unknown, missing required, out of range are refused. */
export function checkScores(
  configs: ScoreConfigDoc[],
  scores: ScoreDoc[],
  comment: string,
): { scores: ScoreDoc[]; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  const byName = new Map(configs.map((c) => [c.name, c]));
  const seen = new Set<string>();
  for (const [i, s] of scores.entries()) {
    const at = `scores.${s.name || i}`;
    const config = byName.get(s.name);
    if (!config) {
      issues.push({ field: at, issue: "is not a score of this queue" });
      continue;
    }
    if (seen.has(s.name)) {
      issues.push({ field: at, issue: "is given twice" });
      continue;
    }
    seen.add(s.name);
    const v = s.value;
    if (config.kind === "boolean" && typeof v !== "boolean") issues.push({ field: at, issue: "must be true or false" });
    if (config.kind === "numeric") {
      const { min = 0, max = 0 } = config;
      if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max)
        issues.push({ field: at, issue: `must be a number from ${min} to ${max}` });
    }
    if (config.kind === "categorical" && (typeof v !== "string" || !config.options?.includes(v)))
      issues.push({ field: at, issue: `must be one of ${config.options?.join(", ")}` });
  }
  for (const c of configs) {
    if (c.required && !seen.has(c.name)) issues.push({ field: `scores.${c.name}`, issue: "is required" });
  }
  if (comment.length > MAX_COMMENT_CHARS)
    issues.push({ field: "comment", issue: `must be at most ${MAX_COMMENT_CHARS} characters` });
  return { scores, issues };
}
