/**
 * Stages four and five of a run, store and publish: the run record inserted with its
 * run.completed outbox intent, and the event handed to the outbox.
 */
import { setImmediate as nextTurn, setTimeout as sleep } from "node:timers/promises";
import { type Collection, createGroupInserter, type GroupInserter } from "@kiln/kit/store";
import type { RunEventOutbox } from "../events/run-events.js";
import type { RunDoc } from "../store/run-store.js";
import type { RunTraceContext } from "../traces/run-trace-context.js";

/** Where runs are stored and their events leave from. */
export interface RunStoreDeps {
  runs: Collection<RunDoc>;
  outbox: RunEventOutbox;
  /** Called once a run is stored, with the trace context of its call: an in-memory append (docs/observability.md). */
  onStored?: (doc: RunDoc, trace: RunTraceContext | undefined) => void;
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
  id: string,
  execute: () => Promise<RunDoc>,
  trace?: RunTraceContext,
): Promise<RunDoc> {
  const intent = nextTurn().then(() => deps.outbox.intend(id));
  // Awaited after the execution: a store that refuses the intent fails the request then.
  intent.catch(() => undefined);
  const doc = await execute();
  await intent;
  await insertRun(deps, doc);
  deps.outbox.publish(doc);
  deps.onStored?.(doc, trace);
  return doc;
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

async function resolveUnknownInsert(deps: RunStoreDeps, runId: string): Promise<void> {
  for (let wait = RESOLVE_RETRY_MS.first; ; wait = Math.min(wait * 2, RESOLVE_RETRY_MS.max)) {
    let stored: RunDoc | null;
    try {
      stored = await deps.runs.findOne({ _id: runId });
    } catch {
      // Still away; an unref'd timer: a process stopping leaves the intent to the relay of any replica.
      await sleep(wait, undefined, { ref: false });
      continue;
    }
    if (!stored) deps.outbox.abandon(runId);
    // A run stored as running (an asynchronous agent run) publishes when it completes.
    else if (stored.status !== "running") deps.outbox.publish(stored);
    return;
  }
}
