import { createHash } from "node:crypto";
import type { AuditEntryDoc } from "./audit-store.js";

/** The hash of the first entry's predecessor: a chain starts from it. */
export const GENESIS_HASH = "0".repeat(64);

/**
 * The canonical text of an entry, every field but its own hash, keys in a fixed order: what the
 * hash covers, so an edit of any field (or of the link to the previous entry) changes the hash.
 */
function canonical(e: Omit<AuditEntryDoc, "_id" | "hash" | "recordedAt">): string {
  return JSON.stringify([
    e.entryId,
    e.organizationId,
    e.sequence,
    e.occurredAt.toISOString(),
    e.actorType,
    e.actorId,
    e.action,
    e.targetType,
    e.targetId,
    e.requestId,
    e.sourceAddress,
    e.changedFields,
    e.outcome,
    e.previousHash,
  ]);
}

/** sha256(previous hash + canonical entry), hex. */
export function entryHash(e: Omit<AuditEntryDoc, "_id" | "hash" | "recordedAt">): string {
  return createHash("sha256").update(e.previousHash).update(canonical(e)).digest("hex");
}

export interface ChainVerdict {
  valid: boolean;
  entries: number;
  firstSequence: number;
  lastSequence: number;
  brokenAtSequence: number;
  problem: "" | "gap" | "hash_mismatch" | "link_mismatch";
}

/**
 * Walks one organization's entries, oldest first, a page at a time (`page(afterSequence)`).
 * The oldest retained entry anchors the chain (retention removes from the start); after it every
 * number follows the one before, every entry links to its predecessor's hash, and every hash is
 * the hash of its entry.
 */
export async function verifyChain(page: (afterSequence: number) => Promise<AuditEntryDoc[]>): Promise<ChainVerdict> {
  const verdict: ChainVerdict = {
    valid: true,
    entries: 0,
    firstSequence: 0,
    lastSequence: 0,
    brokenAtSequence: 0,
    problem: "",
  };
  let previous: AuditEntryDoc | undefined;
  const broken = (sequence: number, problem: ChainVerdict["problem"]) => ({
    ...verdict,
    valid: false,
    brokenAtSequence: sequence,
    problem,
  });
  for (let after = 0; ; ) {
    const entries = await page(after);
    if (entries.length === 0) return verdict;
    for (const e of entries) {
      if (previous && e.sequence !== previous.sequence + 1) return broken(previous.sequence + 1, "gap");
      if (previous && e.previousHash !== previous.hash) return broken(e.sequence, "link_mismatch");
      if (!previous && e.sequence === 1 && e.previousHash !== GENESIS_HASH) return broken(1, "link_mismatch");
      if (entryHash(e) !== e.hash) return broken(e.sequence, "hash_mismatch");
      if (!previous) verdict.firstSequence = e.sequence;
      verdict.entries++;
      verdict.lastSequence = e.sequence;
      previous = e;
    }
    after = previous?.sequence ?? after;
  }
}
