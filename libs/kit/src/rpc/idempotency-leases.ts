import { randomUUID } from "node:crypto";
import type { Store } from "../store/store.js";

/**
 * How long a process's idempotency claims outlive its last sign of life: a retry of a call whose
 * process died (a kill -9, a lost node) takes the key over at most this long after the last renewal,
 * that is within `OWNER_LEASE_MS` of the death (docs/operations.md "What happens when a process or
 * server dies").
 */
export const OWNER_LEASE_MS = 10_000;
/** A live process renews its lease this often while it has a claimed call running. */
const RENEW_MS = 3_000;
/**
 * How long past its end a lease still counts as live: a store outage stops every renewal, and
 * once the store is back the owner's next renewal (within RENEW_MS) must land before a retry on
 * another replica takes its keys over and runs a call twice.
 */
export const OWNER_LEASE_GRACE_MS = 10_000;
const OWNERS = "idempotency_owners";

interface OwnerDoc {
  _id: string;
  leaseUntil: Date;
}

/**
 * One lease per process (per interceptor), not per claim: a claim names its owner, and the owner
 * renews one small document while any of its claimed calls runs, so a call costs no extra writes
 * (an update by `_id` of a large collection is a scan on FerretDB, docs/architecture.md "Store backends").
 */
export interface OwnerLeases {
  readonly owner: string;
  /** Marks a claimed call running (renewing the lease first when it is not fresh); the result ends it. */
  hold(): Promise<() => void>;
  /** Whether `owner`'s lease is still running: false once the process stopped renewing it. */
  isLive(owner: string): Promise<boolean>;
}

export function createOwnerLeases(options: { store: Store; now: () => Date; leaseMs?: number }): OwnerLeases {
  const leaseMs = options.leaseMs ?? OWNER_LEASE_MS;
  const renewMs = Math.min(RENEW_MS, leaseMs / 3);
  const owner = randomUUID();
  const owners = options.store.collection<OwnerDoc>(OWNERS);
  let held = 0;
  let renewedAt = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;

  const renew = async () => {
    const at = options.now().getTime();
    await owners.replaceOne({ _id: owner }, { _id: owner, leaseUntil: new Date(at + leaseMs) }, { upsert: true });
    renewedAt = Math.max(renewedAt, at);
  };

  return {
    owner,
    async hold() {
      held++;
      try {
        if (options.now().getTime() - renewedAt > renewMs) await renew();
      } catch (e) {
        held--;
        throw e;
      }
      // A renewal that fails (the store is down) is tried again at the next tick; the claim is
      // taken over only if none gets through for a whole lease.
      timer ??= setInterval(() => void renew().catch(() => undefined), renewMs).unref();
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        held--;
        if (held === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },
    async isLive(other) {
      if (other === owner) return true;
      const lease = await owners.findOne({ _id: other });
      return lease !== null && new Date(lease.leaseUntil).getTime() + OWNER_LEASE_GRACE_MS > options.now().getTime();
    },
  };
}

/** Deletes the leases of processes gone for over an hour; resolves to how many went. */
export async function sweepOwnerLeases(store: Store, now: Date): Promise<number> {
  const gone = { leaseUntil: { $lt: new Date(now.getTime() - 3_600_000) } };
  return (await store.collection<OwnerDoc>(OWNERS).deleteMany(gone)).deletedCount;
}
