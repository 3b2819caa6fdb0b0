import type { Collection, Store } from "@kiln/kit/store";

/**
 * One audit entry (docs/governance.md). `_id` is `<organizationId>:<sequence, 12 digits>`: the
 * store's own key makes two writers racing for the same place in a chain clash, so each entry
 * takes the next number exactly once and a chain has no fork.
 */
export interface AuditEntryDoc {
  _id: string;
  /** The entry's public id (`aud_…`), unique per organization: a repeated record is stored once. */
  entryId: string;
  organizationId: string;
  sequence: number;
  occurredAt: Date;
  recordedAt: Date;
  actorType: string;
  actorId: string;
  action: string;
  targetType: string;
  targetId: string;
  requestId: string;
  sourceAddress: string;
  changedFields: string[];
  outcome: string;
  previousHash: string;
  hash: string;
}

export const auditEntries = (store: Store): Collection<AuditEntryDoc> => store.collection("audit_log");

export const auditKey = (organizationId: string, sequence: number) =>
  `${organizationId}:${String(sequence).padStart(12, "0")}`;

export async function ensureAuditIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("audit_log", [
    { keys: { organizationId: 1, entryId: 1 }, unique: true },
    { keys: { organizationId: 1, sequence: -1 } },
    { keys: { recordedAt: 1 } },
  ]);
}
