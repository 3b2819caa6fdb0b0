/**
 * Where each audit destination stands in each organization's log (docs/governance.md
 * "Streaming"): one cursor document per destination and organization, `<destination>:<organizationId>`,
 * holding the last sequence the receiver acknowledged. The log itself is the outbox: an entry is
 * exported once its cursor passes it. A process claims an organization's export with a lease
 * (`leaseUntil`, `leaseHolder`) by one atomic update, so replicas do not send the same entries in
 * the normal case; a lease that ran out (its holder died) is taken over.
 */
import type { Collection, Store } from "@kiln/kit/store";

export interface ExportCursorDoc {
  _id: string;
  destination: string;
  organizationId: string;
  /** The last sequence the receiver acknowledged; 0 before the first. */
  sequence: number;
  leaseHolder: string;
  leaseUntil: Date;
  /** Failed attempts in a row, and when the next may start (backoff). */
  failures: number;
  retryAt: Date;
  /** When the receiver last acknowledged a page; absent before the first. */
  acknowledgedAt?: Date;
  /** The last failure in words (`HTTP 503`, a connection error; never a header or a secret) and when. */
  lastError?: string;
  lastErrorAt?: Date;
}

export const exportCursors = (store: Store): Collection<ExportCursorDoc> => store.collection("audit_export_cursors");

export async function ensureExportCursorIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("audit_export_cursors", [{ keys: { destination: 1, organizationId: 1 } }]);
}

export const EPOCH = new Date(0);

/** The cursor of one destination in one organization's log. */
export const cursorKey = (destination: string, organizationId: string) => `${destination}:${organizationId}`;
/** The longest wait after failures in a row. */
export const MAX_BACKOFF_MS = 300_000;

export function createExportCursors(cursors: Collection<ExportCursorDoc>, holder: string, leaseMs: number) {
  return {
    /** The cursors of one destination, by organization. */
    async of(destination: string): Promise<Map<string, ExportCursorDoc>> {
      const docs = await cursors.find({ destination }, { limit: 100_000 });
      return new Map(docs.map((d) => [d.organizationId, d]));
    },

    /**
     * Takes the lease of one organization's export if no one else holds it and its backoff is
     * over; answers the cursor as claimed (the sequence to export after), or null.
     */
    async claim(destination: string, organizationId: string, now: Date): Promise<ExportCursorDoc | null> {
      const _id = cursorKey(destination, organizationId);
      await cursors.updateOne(
        { _id },
        {
          $setOnInsert: {
            destination,
            organizationId,
            sequence: 0,
            leaseHolder: "",
            leaseUntil: EPOCH,
            failures: 0,
            retryAt: EPOCH,
          },
        },
        { upsert: true },
      );
      return cursors.findOneAndUpdate(
        {
          _id,
          retryAt: { $lte: now },
          $or: [{ leaseUntil: { $lte: now } }, { leaseHolder: holder }],
        },
        { $set: { leaseHolder: holder, leaseUntil: new Date(now.getTime() + leaseMs) } },
      );
    },

    /**
     * Moves the cursor to `sequence` once the receiver acknowledged up to it. Only the lease's
     * holder moves it, and only forward from where its claim found it: false if the lease was lost.
     */
    async advance(claimed: ExportCursorDoc, sequence: number, now: Date): Promise<boolean> {
      const r = await cursors.updateOne(
        { _id: claimed._id, leaseHolder: holder, sequence: claimed.sequence },
        {
          $set: {
            sequence,
            failures: 0,
            retryAt: EPOCH,
            acknowledgedAt: now,
            leaseUntil: new Date(now.getTime() + leaseMs),
          },
        },
      );
      if (r.matchedCount === 0) return false;
      claimed.sequence = sequence;
      claimed.failures = 0;
      return true;
    },

    /** A failed send (`error` in words): the next attempt waits 1 s, 2 s, 4 s… up to five minutes. Answers the wait. */
    async failed(claimed: ExportCursorDoc, now: Date, baseMs: number, error: string): Promise<number> {
      const failures = claimed.failures + 1;
      const waitMs = Math.min(baseMs * 2 ** (failures - 1), MAX_BACKOFF_MS);
      await cursors.updateOne(
        { _id: claimed._id, leaseHolder: holder },
        {
          $set: {
            failures,
            retryAt: new Date(now.getTime() + waitMs),
            leaseUntil: EPOCH,
            leaseHolder: "",
            lastError: error.slice(0, 500),
            lastErrorAt: now,
          },
        },
      );
      return waitMs;
    },

    /** Gives the lease up (another replica may take it at once). */
    async release(claimed: ExportCursorDoc): Promise<void> {
      await cursors.updateOne(
        { _id: claimed._id, leaseHolder: holder },
        { $set: { leaseUntil: EPOCH, leaseHolder: "" } },
      );
    },
  };
}

export type ExportCursors = ReturnType<typeof createExportCursors>;
