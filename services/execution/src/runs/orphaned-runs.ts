import type { Collection } from "@kiln/kit/store";
import type { RunEventIntentDoc } from "../events/run-events.js";
import type { RunDoc } from "../store/run-store.js";
import { ORPHANED_RUN_ERROR } from "./run-leases.js";

/**
 * Stores as failed every asynchronous run a previous process left "running". Only for a store that
 * one process alone runs agents on (the embedded mode): there, nothing else can still be running
 * them. An asynchronous run's outbox intent is written before its record and cleared only after its
 * event left, so the runs to look at are those of the pending intents (a few), not every run; their
 * run.completed events then follow through the outbox. Returns how many runs it failed.
 */
export async function failOrphanedRuns(
  runs: Collection<RunDoc>,
  intents: Collection<RunEventIntentDoc>,
  now: () => Date,
): Promise<number> {
  let failed = 0;
  let after = "";
  for (;;) {
    const page = await intents.find(after ? { _id: { $gt: after } } : {}, { sort: { _id: 1 }, limit: 500 });
    for (const intent of page) {
      const { modifiedCount } = await runs.updateOne(
        { _id: intent._id, status: "running" },
        { $set: { status: "failed", error: ORPHANED_RUN_ERROR, completedAt: now() } },
      );
      failed += modifiedCount;
    }
    const last = page.at(-1);
    if (page.length < 500 || !last) return failed;
    after = last._id;
  }
}
