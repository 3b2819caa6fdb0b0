/**
 * Stages four and five of a run, store and publish: the run record inserted with its
 * run.completed outbox intent, and the event handed to the outbox.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
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

/** Inserts a run whose outbox intent exists; a refused insert forgets the intent (no run, no event). */
export async function insertRun(deps: RunStoreDeps, doc: RunDoc): Promise<void> {
  try {
    await runInserter(deps.runs).insert(doc);
  } catch (e) {
    deps.outbox.abandon(doc._id);
    throw e;
  }
}
