/**
 * Leases of asynchronous agent runs (docs/operations.md "What happens when a process or server
 * dies"): a run answered `202 running` carries `leaseUntil`, which the process running it pushes
 * forward every `renewMs` while it runs. A process that dies stops renewing; once the lease has run
 * out, the outbox relay of any replica (it already reads each pending intent's run every second)
 * (and EXPIRY_GRACE_MS more) stores the run as failed and publishes its run.completed
 * (`expireLeasedRun`). So no run stays "running" after its process died, in either mode, for
 * longer than the lease, the grace and a relay turn.
 */
import type { Collection } from "@kiln/kit/store";
import type { RunDoc } from "../store/run-store.js";

/** How long a lease lasts without renewal, and how often a live process renews; ms. */
export const RUN_LEASE = { leaseMs: 15_000, renewMs: 5_000 };

/** How soon a renewal the store refused is tried again. */
const RETRY_MS = 500;
/**
 * How long past its lease a run is still left to its process: a store outage stops every
 * renewal, and when the store is back the owner's renewal (tried every RETRY_MS) must land before
 * another replica's relay, reading the same store, takes the run for an orphan.
 */
export const EXPIRY_GRACE_MS = 5_000;

/** Why a run whose process died failed. */
export const ORPHANED_RUN_ERROR = {
  code: "unavailable",
  message: "Kiln stopped before the run finished (a restart or a crash); run it again",
};

export interface RunLeases {
  /** The lease a new running record starts with. */
  initial(): Date;
  /** Renews this run's lease until `release`. */
  hold(runId: string): void;
  release(runId: string): void;
  stop(): void;
}

export function createRunLeases(
  runs: Collection<RunDoc>,
  options: { leaseMs?: number; renewMs?: number; now?: () => Date; onError?: (err: unknown) => void } = {},
): RunLeases {
  const leaseMs = options.leaseMs ?? RUN_LEASE.leaseMs;
  const renewMs = options.renewMs ?? RUN_LEASE.renewMs;
  const now = options.now ?? (() => new Date());
  const held = new Set<string>();
  const until = () => new Date(now().getTime() + leaseMs);
  let retry: NodeJS.Timeout | undefined;
  const renew = () => {
    if (held.size === 0 || retry) return;
    // One write for every run this process holds; by _id (FerretDB pushes down `_id` $in).
    runs
      .updateMany({ _id: { $in: [...held] }, status: "running" }, { $set: { leaseUntil: until() } })
      .catch((err: unknown) => {
        options.onError?.(err);
        // The store is down: tried again every RETRY_MS, so the leases move on within moments of
        // its return, well inside EXPIRY_GRACE_MS, before another replica takes them as orphans.
        retry = setTimeout(() => {
          retry = undefined;
          renew();
        }, RETRY_MS).unref();
      });
  };
  const timer = setInterval(renew, renewMs);
  timer.unref();
  return {
    initial: until,
    hold: (runId) => void held.add(runId),
    release: (runId) => void held.delete(runId),
    stop: () => {
      clearInterval(timer);
      clearTimeout(retry);
    },
  };
}

/**
 * Stores as failed a running run whose lease has run out (its process died), once: the update is
 * conditional on the record still being running under that lease. Returns the failed run, or
 * undefined when the run is still leased (or another replica failed it first).
 */
export async function expireLeasedRun(runs: Collection<RunDoc>, run: RunDoc, at: Date): Promise<RunDoc | undefined> {
  const expiredBy = new Date(at.getTime() - EXPIRY_GRACE_MS);
  if (run.status !== "running" || run.leaseUntil === undefined || run.leaseUntil.getTime() > expiredBy.getTime()) {
    return undefined;
  }
  const failed: RunDoc = { ...run, status: "failed", error: ORPHANED_RUN_ERROR, completedAt: at };
  delete failed.leaseUntil;
  // Still running under a lease that has run out (a renewal since the read moved it past `at`).
  const { modifiedCount } = await runs.replaceOne(
    { _id: run._id, status: "running", leaseUntil: { $lte: expiredBy } },
    failed,
  );
  return modifiedCount === 1 ? failed : undefined;
}
