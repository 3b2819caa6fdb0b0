import type { Collection, Store } from "@kiln/kit/store";
import type { CostNote } from "@kiln/models/catalog";
import type { TokenUsage } from "@kiln/models/provider";

/** Token counts by class (TokenUsage): an optional class is absent when no call reported it. */
export type UsageDoc = TokenUsage;

export interface RunErrorDoc {
  code: string;
  message: string;
  /** The provider answered 429 after the client's own retries. */
  rateLimited?: true;
  /** The wait the provider asked for (Retry-After), when it said. */
  retryAfterMs?: number;
}

/** One call of a route's target: the model, how it went, its time, and why it failed. */
export interface RouteAttemptDoc {
  model: string;
  status: "succeeded" | "failed" | "skipped";
  latencyMs: number;
  error?: { code: string; message: string };
}

/** What the response cache did for a prompt run (docs/cache.md "The run's cache field"). */
export interface RunCacheDoc {
  status: "hit" | "miss";
  /** A hit: what the answer cost when the model made it (null: it had no price). */
  savedCostUsd?: number | null;
  /** A hit: the run whose answer was replayed. */
  sourceRunId?: string;
  /** The TTL the run used and where it came from (absent on runs stored before defaults existed). */
  ttlSeconds?: number;
  ttlSource?: "request" | "label" | "version";
}

/** A stored run. User JSON (input, output, tool calls, steps) is JSON text (kit/store encodeJson). */
export interface RunDoc {
  _id: string;
  /** "judge": an llm_judge call of an evaluation (Complete); "model": a model run (runs/model-run.ts). */
  kind: "prompt" | "skill" | "agent" | "judge" | "model";
  organizationId: string;
  /** The API key that started the run (absent for users, services and an agent's step runs). */
  apiKeyId?: string;
  /**
   * "running" only for an asynchronous agent run that has not finished yet; "cancelled" only for a
   * synchronous agent run its caller cancelled (docs/api.md "Agents").
   */
  status: "succeeded" | "failed" | "running" | "cancelled";
  inputJson: string;
  outputJson: string | null;
  provider: string | null;
  model: string | null;
  usage: UsageDoc;
  estimatedCostUsd: number | null;
  /** What the cost estimate assumed (CostNote, docs/providers.md "How usage is priced"); absent when nothing. */
  costNotes?: CostNote[];
  latencyMs: number;
  toolCallCount: number;
  /** [{toolKey, count}]: tool keys are user data, so never document keys. */
  toolCallCounts: { toolKey: string; count: number }[];
  toolCallsJson: string;
  stepsJson: string;
  error: RunErrorDoc | null;
  promptId: string;
  promptVersionId: string;
  skillId: string;
  skillVersionId: string;
  /** Agent runs (absent on prompt and skill runs). */
  agentId?: string;
  agentVersionId?: string;
  /** Set on a rerun-from-step: the run it reused, and the step it executed from. */
  parentRunId?: string;
  rerunFromStepId?: string;
  /** The label the run's version was resolved through (`labels`/`@label` in the request); absent when none. */
  label?: string;
  /** The evaluation run a case's skill run or an llm_judge call was made for (absent otherwise). */
  evaluationRunId?: string;
  /** The route the run's model was ("route/<name>"), and every attempt of its targets (docs/providers.md "Routes"). */
  route?: string;
  attempts?: RouteAttemptDoc[];
  /** What the response cache did for a prompt run (docs/cache.md); absent when it did not use it. */
  cache?: RunCacheDoc;
  createdAt: Date;
  completedAt: Date;
  /** A running asynchronous run's lease, renewed by the process running it (runs/run-leases.ts). */
  leaseUntil?: Date;
}

export function runCollection(store: Store): Collection<RunDoc> {
  return store.collection<RunDoc>("runs");
}

export async function ensureRunIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("runs", [
    { keys: { organizationId: 1, _id: -1 } },
    { keys: { organizationId: 1, createdAt: -1, _id: -1 } },
  ]);
}
