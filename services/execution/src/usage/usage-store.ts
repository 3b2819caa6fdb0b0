import { idFloorAt } from "@kiln/kit/ids";
import type { Logger } from "@kiln/kit/logger";
import { type Collection, isDuplicateKeyError, type Store } from "@kiln/kit/store";
import { deleteInBatches, type Sweeper, startSweeper } from "@kiln/kit/sweeper";
import type { PackedEntries } from "./usage-journal.js";
import {
  addCounters,
  COUNTER_NAMES,
  fieldDigest,
  monthOf,
  rowIdOf,
  scopesOf,
  type UsageCounters,
  type UsageEntry,
  type UsageKey,
  zeroCounters,
} from "./usage-rows.js";

export interface UsageRowDoc extends UsageCounters {
  key: UsageKey;
}

/** `_id` "<organizationId>|<YYYY-MM-DD>" (a day) or "<organizationId>|<YYYY-MM>" (a month). */
export interface UsagePeriodDoc {
  _id: string;
  organizationId: string;
  period: string;
  totals: UsageCounters;
  /** The day's rows by rowIdOf; absent on month documents. */
  rows?: Record<string, UsageRowDoc>;
  /** Budget scopes (scopeFieldOf) summed: what a budget reads in one document. */
  scopes: Record<string, UsageCounters>;
  /** Per ledger instance, the sequence number of the last flush applied here. */
  applied: Record<string, number>;
}

/**
 * A run counted, by its id: which flush counted it. Kept CLAIM_RETENTION_SECONDS after the run's id
 * was made (ids sort by their time: swept by `_id` alone, no date field or index to write per run);
 * `createdAt` only on claims written before that.
 */
export interface UsageClaimDoc {
  _id: string;
  flushId: string;
  createdAt?: Date;
}

/**
 * A flush not finished yet: what it counts, so that any replica can finish it after a crash;
 * `packed` (usage-journal.ts), or `entries` written out as journals were before it.
 */
export interface UsageFlushDoc {
  _id: string;
  instanceId: string;
  seq: number;
  packed?: PackedEntries;
  entries?: UsageEntry[];
  createdAt: Date;
}

export interface UsageCollections {
  periods: Collection<UsagePeriodDoc>;
  claims: Collection<UsageClaimDoc>;
  flushes: Collection<UsageFlushDoc>;
}

export function usageCollections(store: Store): UsageCollections {
  return {
    periods: store.collection<UsagePeriodDoc>("usage_periods"),
    claims: store.collection<UsageClaimDoc>("usage_claims"),
    flushes: store.collection<UsageFlushDoc>("usage_flushes"),
  };
}

/** How long a run's claim is kept: longer than any redelivery or outbox relay can come back. */
export const CLAIM_RETENTION_SECONDS = 7 * 24 * 3600;

/**
 * Deletes, every `intervalMs` (default hourly), the claims of runs whose id was made more than
 * CLAIM_RETENTION_SECONDS ago, on every backend (a claim's `_id` is its run's id).
 */
export function startClaimSweeper(
  claims: Collection<UsageClaimDoc>,
  logger: Logger,
  options: { intervalMs?: number; now?: () => Date } = {},
): Sweeper {
  const now = options.now ?? (() => new Date());
  return startSweeper({
    logger,
    what: "usage claims",
    intervalMs: options.intervalMs,
    sweep: () =>
      deleteInBatches(claims, {
        _id: { $lt: idFloorAt("run", new Date(now().getTime() - CLAIM_RETENTION_SECONDS * 1000)) },
      }),
  });
}

export const periodIdOf = (organizationId: string, period: string) => `${organizationId}|${period}`;

/** A scope's field name in `scopes`: a digest, so that no id becomes a document key. */
export const scopeFieldOf = (scope: string): string => fieldDigest(scope);

/** One period document's share of a flush. */
interface PeriodDelta {
  organizationId: string;
  period: string;
  totals: UsageCounters;
  rows: Map<string, UsageRowDoc> | undefined;
  scopes: Map<string, UsageCounters>;
}

/** The entries summed per day and per month document (and per row and scope inside them). */
export function periodDeltasOf(entries: UsageEntry[]): PeriodDelta[] {
  const deltas = new Map<string, PeriodDelta>();
  const deltaOf = (organizationId: string, period: string, withRows: boolean) => {
    const id = periodIdOf(organizationId, period);
    let d = deltas.get(id);
    if (!d) {
      d = { organizationId, period, totals: zeroCounters(), rows: withRows ? new Map() : undefined, scopes: new Map() };
      deltas.set(id, d);
    }
    return d;
  };
  for (const e of entries) {
    // Each worked out once per run, for both of its periods.
    const rowId = rowIdOf(e.key);
    const fields = scopesOf(e.key).map(scopeFieldOf);
    for (const d of [
      deltaOf(e.organizationId, e.key.day, true),
      deltaOf(e.organizationId, monthOf(new Date(`${e.key.day}T00:00:00Z`)), false),
    ]) {
      addCounters(d.totals, e.counters);
      if (d.rows) {
        const row = d.rows.get(rowId) ?? { key: e.key, ...zeroCounters() };
        d.rows.set(rowId, addCounters(row, e.counters) as UsageRowDoc);
      }
      for (const field of fields) d.scopes.set(field, addCounters(d.scopes.get(field) ?? zeroCounters(), e.counters));
    }
  }
  return [...deltas.values()];
}

function incOf(d: PeriodDelta): Record<string, number> {
  const inc: Record<string, number> = {};
  const add = (prefix: string, c: UsageCounters) => {
    for (const name of COUNTER_NAMES) inc[`${prefix}.${name}`] = c[name];
  };
  add("totals", d.totals);
  for (const [rowId, row] of d.rows ?? []) add(`rows.${rowId}`, row);
  for (const [field, c] of d.scopes) add(`scopes.${field}`, c);
  return inc;
}

/**
 * Applies one period's share of flush `seq` of ledger `instanceId`, once: the filter matches only
 * while the document has not recorded that flush. Resolves false when it had been applied already.
 */
export async function applyPeriodDelta(
  periods: Collection<UsagePeriodDoc>,
  instanceId: string,
  seq: number,
  d: PeriodDelta,
): Promise<boolean> {
  const marker = `applied.${instanceId}`;
  const filter = {
    _id: periodIdOf(d.organizationId, d.period),
    $or: [{ [marker]: { $exists: false } }, { [marker]: { $lt: seq } }],
  };
  const set: Record<string, unknown> = { [marker]: seq };
  for (const [rowId, row] of d.rows ?? []) set[`rows.${rowId}.key`] = row.key;
  const update = {
    $inc: incOf(d),
    $set: set,
    $setOnInsert: { organizationId: d.organizationId, period: d.period },
  };
  try {
    const r = await periods.updateOne(filter, update, { upsert: true });
    return r.matchedCount > 0 || r.upsertedId !== undefined;
  } catch (e) {
    // The document exists (made since, or holding this flush already): update it if it lacks the flush.
    if (!isDuplicateKeyError(e)) throw e;
    const r = await periods.updateOne(filter, { $inc: update.$inc, $set: set });
    return r.matchedCount > 0;
  }
}

/** The period documents of an organization that exist, by period ("YYYY-MM-DD" or "YYYY-MM"). */
export async function readPeriods(
  periods: Collection<UsagePeriodDoc>,
  organizationId: string,
  names: string[],
): Promise<UsagePeriodDoc[]> {
  const docs = await Promise.all(names.map((p) => periods.findOne({ _id: periodIdOf(organizationId, p) })));
  return docs.filter((d): d is UsagePeriodDoc => d !== null);
}

/** What a scope ("organization", "api_key:<id>", "prompt:<id>", "connection:<id>") spent in one period. */
export async function readScopeUsage(
  periods: Collection<UsagePeriodDoc>,
  organizationId: string,
  period: string,
  scope: string,
): Promise<UsageCounters> {
  const doc = await periods.findOne({ _id: periodIdOf(organizationId, period) });
  return doc?.scopes[scopeFieldOf(scope)] ?? zeroCounters();
}
