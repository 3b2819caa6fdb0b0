/**
 * Which run a call with an Idempotency-Key started: one small record per key, written while the
 * run executes, so that a retry whose key's claim did not survive a fault (its process died after
 * storing the run and before keeping the answer, or the store failed the insert's answer while
 * taking the run) answers the stored run instead of running the call again (docs/operations.md
 * "What happens when a process or server dies").
 */

import type { Logger } from "@kiln/kit/logger";
import { IDEMPOTENCY_TTL_MS } from "@kiln/kit/rpc/idempotency";
import { type Collection, isDuplicateKeyError, type Store } from "@kiln/kit/store";
import { deleteInBatches, type Sweeper, startSweeper } from "@kiln/kit/sweeper";
import type { RunDoc } from "../store/run-store.js";

/** A key's run: `_id` is the call's key (its principal, method, Idempotency-Key and request, hashed). */
interface RunKeyDoc {
  _id: string;
  runId: string;
  createdAt: Date;
}

const COLLECTION = "run_keys";

export interface RunKeys {
  /** The run an earlier attempt of the call stored, within the keys' 24 h; null when none was stored. */
  prior(key: string, organizationId: string): Promise<RunDoc | null>;
  /** Records that the call's run is `runId` (replacing an earlier attempt's run that was never stored). */
  remember(key: string, runId: string): Promise<void>;
}

export function createRunKeys(store: Store, runs: Collection<RunDoc>, now: () => Date = () => new Date()): RunKeys {
  const keys = store.collection<RunKeyDoc>(COLLECTION);
  return {
    async prior(key, organizationId) {
      const record = await keys.findOne({ _id: key });
      if (!record || now().getTime() - record.createdAt.getTime() > IDEMPOTENCY_TTL_MS) return null;
      return runs.findOne({ _id: record.runId, organizationId });
    },
    async remember(key, runId) {
      const record = { _id: key, runId, createdAt: now() };
      try {
        await keys.insertOne(record);
      } catch (e) {
        if (!isDuplicateKeyError(e)) throw e;
        // An earlier attempt's record, whose run `prior` did not find: this attempt's run replaces it.
        await keys.deleteOne({ _id: key });
        await keys.insertOne(record);
      }
    },
  };
}

/** Deletes the key records older than the keys' 24 h, every `intervalMs` (default hourly). */
export async function startRunKeySweeper(store: Store, logger: Logger, intervalMs?: number): Promise<Sweeper> {
  await store.ensureIndexes(COLLECTION, [
    { keys: { createdAt: 1 }, expireAfterSeconds: Math.ceil(IDEMPOTENCY_TTL_MS / 1000) },
  ]);
  const keys = store.collection<RunKeyDoc>(COLLECTION);
  return startSweeper({
    logger,
    what: "run keys",
    intervalMs,
    sweep: () => deleteInBatches(keys, { createdAt: { $lt: new Date(Date.now() - IDEMPOTENCY_TTL_MS) } }),
  });
}
