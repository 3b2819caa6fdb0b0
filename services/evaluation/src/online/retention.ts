/**
 * How long online scores are kept (ONLINE_SCORE_RETENTION_DAYS, docs/observability.md "Online
 * evaluation"): a score, and the key that marks its (rule, target) scored, go that long after it
 * was stored. Rules stay until deleted.
 */
import type { OnlineCollections } from "./online-store.js";

export const DEFAULT_SCORE_RETENTION_MS = 90 * 24 * 3_600_000;

/** Deletes the scores (and their keys) stored before `cutoff`; resolves to how many scores went. */
export async function sweepScores(c: OnlineCollections, cutoff: Date): Promise<number> {
  const { deletedCount } = await c.scores.deleteMany({ createdAt: { $lt: cutoff } });
  await c.scored.deleteMany({ createdAt: { $lt: cutoff } });
  return deletedCount;
}
