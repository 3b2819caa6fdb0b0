/**
 * What one stored run adds to the usage ledger (docs/usage.md): its key (organization, UTC day,
 * API key, prompt/skill/agent version, model, connection) and its counters. Pure: no I/O.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { RunDoc } from "../store/run-store.js";

/** The counters of a group of runs: runs, tokens by class, cost. */
export interface UsageCounters {
  runs: number;
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  costUsd: number;
  /** Prompt runs answered from the response cache (docs/cache.md), and what their answers had cost. */
  cacheHits: number;
  savedCostUsd: number;
}

export const COUNTER_NAMES = [
  "runs",
  "inputTokens",
  "cachedInputTokens",
  "cacheWriteInputTokens",
  "outputTokens",
  "reasoningTokens",
  "costUsd",
  "cacheHits",
  "savedCostUsd",
] as const satisfies readonly (keyof UsageCounters)[];

/** The dimensions of one ledger row; "" where the run has none. */
export interface UsageKey {
  day: string;
  apiKeyId: string;
  promptId: string;
  promptVersionId: string;
  skillId: string;
  skillVersionId: string;
  agentId: string;
  agentVersionId: string;
  model: string;
  provider: string;
  connectionId: string;
}

/** One run's entry: who it belongs to, its row's key and what it adds. */
export interface UsageEntry {
  runId: string;
  organizationId: string;
  key: UsageKey;
  counters: UsageCounters;
}

export const zeroCounters = (): UsageCounters => ({
  runs: 0,
  inputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteInputTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  costUsd: 0,
  cacheHits: 0,
  savedCostUsd: 0,
});

export function addCounters(into: UsageCounters, more: UsageCounters): UsageCounters {
  // A document written before a counter existed has none of it: 0.
  for (const name of COUNTER_NAMES) into[name] += more[name] ?? 0;
  return into;
}

/** "YYYY-MM-DD" and "YYYY-MM" of a moment, in UTC. */
export const dayOf = (at: Date): string => at.toISOString().slice(0, 10);
export const monthOf = (at: Date): string => at.toISOString().slice(0, 7);

/** Whole seconds from `at` to the start of the next UTC month (at least 1): a plan's Retry-After. */
export function secondsToNextMonth(at: Date): number {
  const next = Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - at.getTime()) / 1000));
}

/**
 * The entry of a stored run. An agent run counts as a run with no tokens and no cost of its own:
 * its totals are the sum of the child runs its prompt and skill steps stored, each counted once
 * on its own entry. A run with no price adds no cost (its tokens still count).
 */
export function usageEntryOf(run: RunDoc, connectionId: string): UsageEntry {
  const aggregate = run.kind === "agent";
  const u = run.usage;
  const hit = run.cache?.status === "hit";
  return {
    runId: run._id,
    organizationId: run.organizationId,
    key: {
      day: dayOf(run.completedAt),
      apiKeyId: run.apiKeyId ?? "",
      promptId: run.promptId,
      promptVersionId: run.promptVersionId,
      skillId: run.skillId,
      skillVersionId: run.skillVersionId,
      agentId: run.agentId ?? "",
      agentVersionId: run.agentVersionId ?? "",
      model: run.model ?? "",
      provider: run.provider ?? "",
      connectionId,
    },
    counters: aggregate
      ? { ...zeroCounters(), runs: 1 }
      : {
          runs: 1,
          inputTokens: u.inputTokens,
          cachedInputTokens: u.cachedInputTokens ?? 0,
          cacheWriteInputTokens: u.cacheWriteInputTokens ?? 0,
          outputTokens: u.outputTokens,
          reasoningTokens: u.reasoningTokens ?? 0,
          costUsd: run.estimatedCostUsd ?? 0,
          cacheHits: hit ? 1 : 0,
          savedCostUsd: hit ? (run.cache?.savedCostUsd ?? 0) : 0,
        },
  };
}

/** A row's field name in its day document: a digest of its key (ids never become document keys). */
export function rowIdOf(key: UsageKey): string {
  const text = JSON.stringify([
    key.apiKeyId,
    key.promptId,
    key.promptVersionId,
    key.skillId,
    key.skillVersionId,
    key.agentId,
    key.agentVersionId,
    key.model,
    key.provider,
    key.connectionId,
  ]);
  return fieldDigest(text);
}

/**
 * A text (a row's key, a budget scope) as a document field name: its SHA-256, shortened, so that
 * no id becomes a document key. The same few keys come back with every flush: each is digested once.
 */
export function fieldDigest(text: string): string {
  let digest = digests.get(text);
  if (digest === undefined) {
    digest = createHash("sha256").update(text).digest("base64url").slice(0, 22);
    digests.set(text, digest);
  }
  return digest;
}
const digests = new LRUCache<string, string>({ max: 10_000 });

/** The scopes a run's spend is summed under for budgets: the organization, its key, prompt, connection. */
export function scopesOf(key: UsageKey): string[] {
  const scopes = ["organization"];
  if (key.apiKeyId) scopes.push(`api_key:${key.apiKeyId}`);
  if (key.promptId) scopes.push(`prompt:${key.promptId}`);
  if (key.connectionId) scopes.push(`connection:${key.connectionId}`);
  return scopes;
}
