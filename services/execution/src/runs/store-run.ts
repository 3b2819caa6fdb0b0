/**
 * Stages four and five of a run, store and publish: the run record inserted with its
 * run.completed outbox intent, and the event handed to the outbox.
 */
import { setImmediate as nextTurn, setTimeout as sleep } from "node:timers/promises";
import { type Collection, createGroupInserter, type GroupInserter } from "@kiln/kit/store";
import type { BudgetGate } from "../budgets/budget-gate.js";
import type { RunEventOutbox } from "../events/run-events.js";
import type { LimitedRun, TokenLimit, TokenLimits } from "../limits/token-limits.js";
import type { RunDoc } from "../store/run-store.js";
import type { RunTraceContext } from "../traces/run-trace-context.js";
import type { RunAllowance } from "../usage/run-allowance.js";
import type { RunKeys } from "./run-keys.js";

/** Where runs are stored and their events leave from. */
export interface RunStoreDeps {
  runs: Collection<RunDoc>;
  outbox: RunEventOutbox;
  /** Called once a run is stored, with the trace context of its call: an in-memory append (docs/observability.md). */
  onStored?: (doc: RunDoc, trace: RunTraceContext | undefined) => void;
  /** The plan's monthly run limit (docs/usage.md); absent: no limit is checked (an agent's steps). */
  allowance?: Pick<RunAllowance, "admit" | "finished">;
  /** The organization's budgets (docs/budgets.md); absent: none is checked. */
  budgets?: Pick<BudgetGate, "admit" | "finished">;
  /** Token-per-minute limits (docs/usage.md); absent: none is checked. */
  tokenLimits?: Pick<TokenLimits, "admit" | "finished">;
  /** Which run each call with an Idempotency-Key started (run-keys.ts); absent: not recorded. */
  runKeys?: RunKeys;
}

/**
 * The run about to start: its id, its organization and the API key that started it, if one did;
 * `tokenLimits` are its key's and its models' token-per-minute limits (limits/token-limits.ts).
 */
export interface RunStart extends LimitedRun {
  id: string;
  organizationId: string;
  apiKeyId?: string;
  /** The call's idempotency key (kit's kIdempotencyKey), when it came with one. */
  idempotencyKey?: string;
  /** A prompt run's prompt and its model's connection: the budgets scoped to them (budget-gate.ts). */
  promptId?: string;
  connectionId?: string;
}

/**
 * Stores the run `execute` produces, with its run.completed: the outbox intent is inserted while
 * the run executes (it must exist before the run does), the run is inserted, and the event leaves
 * in the background. The caller's answer waits for one insert after the execution, not for the bus.
 * The intent's insert starts on the next turn of the event loop, once the execution has sent its
 * first provider request: building and sending a write is not put in front of the model call.
 */
export async function storeRun(
  deps: RunStoreDeps,
  start: RunStart,
  execute: () => Promise<RunDoc>,
  trace?: RunTraceContext,
): Promise<RunDoc> {
  const { id, organizationId, apiKeyId } = start;
  const prior = await priorRun(deps, start);
  if (prior) return prior;
  // Before anything is called or written: a run past the plan's limit is refused here (429).
  await deps.allowance?.admit(organizationId, id);
  let stored: RunDoc | undefined;
  try {
    // ... and a run its budgets refuse (429 naming the budget), or its token-per-minute limits.
    await deps.budgets?.admit(start);
    deps.tokenLimits?.admit(start);
    const intent = nextTurn().then(() => intendRun(deps, start));
    // Awaited after the execution: a store that refuses the intent fails the request then.
    intent.catch(() => undefined);
    const executed = await execute();
    const doc = apiKeyId ? { ...executed, apiKeyId } : executed;
    await intent;
    await insertRun(deps, doc);
    stored = doc;
    deps.outbox.publish(doc);
    deps.onStored?.(doc, trace);
    return doc;
  } finally {
    deps.allowance?.finished(organizationId, id, stored !== undefined);
    deps.budgets?.finished(start, stored);
    deps.tokenLimits?.finished(start, stored);
  }
}

/**
 * The run an earlier attempt of this call stored, when the call has an idempotency key and one
 * did: answered as the call's outcome (nothing is run again). Null otherwise.
 */
export async function priorRun(deps: RunStoreDeps, start: RunStart): Promise<RunDoc | null> {
  if (!start.idempotencyKey || !deps.runKeys) return null;
  return deps.runKeys.prior(start.idempotencyKey, start.organizationId);
}

/** What is written before a run is: its run.completed intent and, for a keyed call, its key's run. */
export async function intendRun(deps: RunStoreDeps, start: RunStart): Promise<void> {
  const key = start.idempotencyKey;
  await Promise.all([deps.outbox.intend(start.id), key && deps.runKeys?.remember(key, start.id)]);
}

/** What `start` (an asynchronous run's first record) answers, once the run was admitted under the plan's limit. */
export async function admitted<T>(deps: RunStoreDeps, run: RunStart, start: () => Promise<T>): Promise<T> {
  await deps.allowance?.admit(run.organizationId, run.id);
  try {
    await deps.budgets?.admit(run);
    deps.tokenLimits?.admit(run);
    return await start();
  } catch (err) {
    deps.allowance?.finished(run.organizationId, run.id, false);
    throw err;
  }
}

/**
 * An agent's steps' deps: their runs count (the plan's, the budgets', the agent's key's and their
 * models' tokens a minute: `keyLimits`) and are not refused one by one.
 */
export function stepDeps<T extends RunStoreDeps>(deps: T, keyLimits: readonly TokenLimit[] = []): T {
  const budgets = deps.budgets && { ...deps.budgets, admit: async () => undefined };
  const limits = deps.tokenLimits;
  const tokenLimits = limits && {
    admit: () => undefined,
    finished: (run: LimitedRun, doc: RunDoc | undefined) =>
      limits.finished({ tokenLimits: [...keyLimits, ...(run.tokenLimits ?? [])] }, doc),
  };
  return { ...deps, allowance: undefined, budgets, tokenLimits };
}

/** Runs stored at once under load go to the store together (one group inserter per collection). */
const runInserters = new WeakMap<Collection<RunDoc>, GroupInserter<RunDoc>>();

function runInserter(runs: Collection<RunDoc>): GroupInserter<RunDoc> {
  let inserter = runInserters.get(runs);
  if (!inserter) {
    inserter = createGroupInserter(runs);
    runInserters.set(runs, inserter);
  }
  return inserter;
}

/**
 * Inserts a run whose outbox intent exists. A failed insert may still have reached the store (the
 * connection dropped after the server wrote it, the answer timed out): its outcome is resolved in
 * the background by reading the run by id once the store answers, never by dropping the intent
 * unread: a run found is published, a run not found has its intent forgotten (no run, no event).
 */
export async function insertRun(deps: RunStoreDeps, doc: RunDoc): Promise<void> {
  try {
    await runInserter(deps.runs).insert(doc);
  } catch (e) {
    void resolveUnknownInsert(deps, doc._id);
    throw e;
  }
}

/** How long the reads resolving an unknown insert wait between tries while the store is away. */
const RESOLVE_RETRY_MS = { first: 250, max: 2_000 };

/**
 * How long after a first read that did not find the run it is read again before its intent is
 * forgotten: an insert the store was still carrying out when it failed the answer (a server
 * shutting down drains its connections one by one) may land after that first read.
 */
const RESOLVE_RECHECK_MS = 5_000;

/** The run by id once the store answers (tried again while it is away). */
async function readWhenBack(deps: RunStoreDeps, runId: string): Promise<RunDoc | null> {
  for (let wait = RESOLVE_RETRY_MS.first; ; wait = Math.min(wait * 2, RESOLVE_RETRY_MS.max)) {
    try {
      return await deps.runs.findOne({ _id: runId });
    } catch {
      // Still away; an unref'd timer: a process stopping leaves the intent to the relay of any replica.
      await sleep(wait, undefined, { ref: false });
    }
  }
}

async function resolveUnknownInsert(deps: RunStoreDeps, runId: string): Promise<void> {
  let stored = await readWhenBack(deps, runId);
  if (!stored) {
    await sleep(RESOLVE_RECHECK_MS, undefined, { ref: false });
    stored = await readWhenBack(deps, runId);
  }
  if (!stored) deps.outbox.abandon(runId);
  // A run stored as running (an asynchronous agent run) publishes when it completes.
  else if (stored.status !== "running") deps.outbox.publish(stored);
}
