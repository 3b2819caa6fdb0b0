import type { Logger } from "./logger.js";
import type { Collection, Filter } from "./store/store.js";

export interface SweeperOptions {
  logger: Logger;
  /** What is swept, for the log: "idempotency records", "webhook deliveries". */
  what: string;
  /** Deletes what has expired; resolves to how many documents went. */
  sweep: () => Promise<number>;
  /** Between two sweeps; default one hour. */
  intervalMs?: number;
}

export interface Sweeper {
  /** One sweep now (also what the timer runs); resolves to how many documents went, 0 on a failure. */
  runOnce(): Promise<number>;
  /** No further sweep; resolves once the one in flight is done, so the store can close after it. */
  stop(): Promise<void>;
}

export const DEFAULT_SWEEP_INTERVAL_MS = 3_600_000;

/**
 * Runs a retention sweep once shortly after start (a process that lives less than an interval
 * still sweeps) and then every interval. A failed sweep is logged and tried again at the next
 * tick: what it would have deleted only waits longer. The timer never holds the process open.
 */
export function startSweeper(options: SweeperOptions): Sweeper {
  let running: Promise<number> | undefined;
  let stopped = false;
  const runOnce = () => {
    running ??= options
      .sweep()
      .then((deleted) => {
        if (deleted > 0) options.logger.info({ deleted }, `expired ${options.what} deleted`);
        return deleted;
      })
      .catch((err: unknown) => {
        if (!stopped) options.logger.warn({ err }, `the sweep of expired ${options.what} failed`);
        return 0;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const tick = () => {
    if (!stopped) void runOnce();
  };
  const first = setTimeout(tick, 5_000);
  const timer = setInterval(tick, options.intervalMs ?? DEFAULT_SWEEP_INTERVAL_MS);
  first.unref();
  timer.unref();
  return {
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * Deletes the documents `filter` matches, `batch` ids at a time (one read of ids, one delete by
 * them): a sweep never holds a whole expired backlog in one request. Resolves to how many went.
 */
export async function deleteInBatches<T extends { _id: string }>(
  collection: Collection<T>,
  filter: Filter,
  batch = 1_000,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const found = await collection.find(filter, { projection: { _id: 1 }, limit: batch });
    if (found.length === 0) return deleted;
    deleted += (await collection.deleteMany({ _id: { $in: found.map((d) => d._id) } })).deletedCount;
    if (found.length < batch) return deleted;
  }
}
