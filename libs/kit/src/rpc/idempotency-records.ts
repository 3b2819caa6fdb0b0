/**
 * Where idempotency keys are kept (the claims and their first answers, apart) and how they expire:
 * the indexes and the sweep.
 */
import type { Logger } from "../logger.js";
import type { Store } from "../store/store.js";
import { type Sweeper, startSweeper } from "../sweeper.js";
import { sweepOwnerLeases } from "./idempotency-leases.js";

/** How long a key is remembered (docs/api.md "Conventions"). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** The claims (one per key) and the first answers, by the same `_id`. */
export const KEYS = "idempotency_keys";
export const RESPONSES = "idempotency_responses";

/**
 * The indexes the sweep reads by, on `createdAt`. On MongoDB they are also TTL indexes, which
 * FerretDB 1.24 does not have (there the sweep alone deletes): answers expire with the time to
 * live, claims an hour later, so MongoDB's monitor, which deletes in no set order, removes an
 * answer before its claim as the sweep does.
 */
export async function ensureIdempotencyIndexes(store: Store, ttlMs = IDEMPOTENCY_TTL_MS): Promise<void> {
  const ttlSeconds = Math.ceil(ttlMs / 1000);
  await store.ensureIndexes(RESPONSES, [{ keys: { createdAt: 1 }, expireAfterSeconds: ttlSeconds }]);
  await store.ensureIndexes(KEYS, [{ keys: { createdAt: 1 }, expireAfterSeconds: ttlSeconds + 3_600 }]);
}

/**
 * Deletes the records older than the time to live, answers first: a key is never claimed again
 * while its old answer is still stored (the new answer's insert would clash with it). Resolves to
 * how many documents went.
 */
export async function sweepIdempotencyRecords(
  store: Store,
  options: { ttlMs?: number; now?: () => Date } = {},
): Promise<number> {
  const now = options.now ?? (() => new Date());
  const expired = { createdAt: { $lt: new Date(now().getTime() - (options.ttlMs ?? IDEMPOTENCY_TTL_MS)) } };
  const answers = await store.collection(RESPONSES).deleteMany(expired);
  const claims = await store.collection(KEYS).deleteMany(expired);
  // The leases of processes long gone go too (not counted: they are no key's record).
  await sweepOwnerLeases(store, now());
  return answers.deletedCount + claims.deletedCount;
}

/** The indexes, then a sweep shortly after start and every `intervalMs` (default hourly) until stop(). */
export async function startIdempotencySweeper(options: {
  store: Store;
  logger: Logger;
  ttlMs?: number;
  now?: () => Date;
  intervalMs?: number;
}): Promise<Sweeper> {
  await ensureIdempotencyIndexes(options.store, options.ttlMs);
  return startSweeper({
    logger: options.logger,
    what: "idempotency records",
    intervalMs: options.intervalMs,
    sweep: () => sweepIdempotencyRecords(options.store, options),
  });
}
