/**
 * Trace retention per organization (docs/observability.md "Retention"): each organization's
 * `retentionDays`, the `expiresAt` every stored span and trace summary gets from it, and the sweep
 * that deletes what has expired. On MongoDB the `expiresAt` indexes are also TTL indexes; FerretDB
 * and SQLite have none, so the sweep is always the remover (IndexSpec).
 */
import type { IdentityAuth } from "@kiln/kit/authorizer";
import { invalidArgument, permissionDenied } from "@kiln/kit/errors";
import type { Logger } from "@kiln/kit/logger";
import type { Principal } from "@kiln/kit/principal";
import type { Collection, Filter, Store } from "@kiln/kit/store";
import { deleteInBatches, type Sweeper, startSweeper } from "@kiln/kit/sweeper";
import type { TraceCollections } from "./trace-store.js";

export const RETENTION_DAYS = { default: 30, min: 1, max: 400 } as const;
const DAY_MS = 86_400_000;
/** How long a process reuses an organization's retention: a change reaches other replicas within it. */
export const RETENTION_CACHE_MS = 60_000;
/** Expired documents deleted per statement: a large backlog never holds the store (SQLite: the process) long. */
const SWEEP_BATCH = 1_000;
/**
 * How far back the first sweep of a process looks: the longest retention and a day (what expired
 * before that was swept by an earlier process, or by MongoDB's TTL).
 */
const FIRST_SWEEP_DAYS = RETENTION_DAYS.max + 1;

const dayOf = (t: Date | number) => new Date(t).toISOString().slice(0, 10);

/** The expiry fields of a stored span or summary: the date, and its day, which the sweep reads by. */
export const expiryOf = (expiresAt: Date) => ({ expiresAt, expiresDay: dayOf(expiresAt) });

export interface TraceSettingsDoc {
  /** The organization's id: one settings document per organization. */
  _id: string;
  retentionDays: number;
  updatedAt: Date;
}

export interface TraceSettings {
  organizationId: string;
  retentionDays: number;
  updatedAt: Date | null;
}

const settingsCollection = (store: Store): Collection<TraceSettingsDoc> => store.collection("trace_settings");

/**
 * The `expiresDay` indexes the sweep reads by (an equality: every store's index serves it, where
 * the embedded store would scan for a range), and TTL indexes on `expiresAt` for MongoDB.
 */
export async function ensureRetentionIndexes(store: Store): Promise<void> {
  for (const name of ["trace_spans", "traces", "trace_sessions", "trace_pending_logs"])
    await store.ensureIndexes(name, [{ keys: { expiresDay: 1 } }, { keys: { expiresAt: 1 }, expireAfterSeconds: 0 }]);
}

function sweepWhere(collection: Collection<{ _id: string }>, filter: Filter): Promise<number> {
  return deleteInBatches(collection, filter, SWEEP_BATCH);
}

/**
 * Deletes the spans, then the trace summaries, then the sessions (which expire with their last
 * trace), then the log events that waited for their span in vain, whose `expiresAt` has passed, in batches: the
 * whole days among the `days` before `now`'s, then what expired earlier today. Resolves to how
 * many documents went.
 */
export async function sweepExpiredTraces(
  collections: TraceCollections,
  now = new Date(),
  days = FIRST_SWEEP_DAYS,
): Promise<number> {
  // The whole days in one `$in`: a key range per day where an index serves it, and on FerretDB
  // 1.24 (which scans the collection for any read but by `_id`) one scan instead of one per day.
  const past = Array.from({ length: days }, (_, i) => dayOf(now.getTime() - (days - i) * DAY_MS));
  let deleted = 0;
  // Log events still waiting for their span go too (log-joins.ts: they wait a day at most).
  const all = [collections.spans, collections.traces, collections.sessions, collections.pendingLogs];
  for (const c of all as unknown as Collection<{
    _id: string;
  }>[]) {
    if (past.length > 0) deleted += await sweepWhere(c, { expiresDay: { $in: past } });
    deleted += await sweepWhere(c, { expiresDay: dayOf(now), expiresAt: { $lte: now } });
  }
  return deleted;
}

/** What each kind of document is dated by when it has none (stored before retention existed). */
const UNDATED = [
  ["spans", "endTime"],
  ["traces", "endTime"],
  ["sessions", "lastTime"],
] as const;

type Undated = { _id: string; organizationId: string } & Record<string, unknown>;

/**
 * Dates the documents stored before retention existed (no `expiresDay`): their own time (a span's
 * or trace's end, a session's last activity) plus their organization's retention, rounded up to
 * the next UTC midnight so that one statement dates a whole day of them; one already past is
 * dated `now` and goes with today's sweep. Resolves to how many it dated.
 */
export async function dateUndatedTraces(
  collections: TraceCollections,
  retentionDaysOf: (organizationId: string) => Promise<number>,
  now = new Date(),
): Promise<number> {
  let dated = 0;
  for (const [name, timeField] of UNDATED) {
    const c = collections[name] as unknown as Collection<Undated>;
    for (;;) {
      const batch = await c.find(
        { expiresDay: { $exists: false } },
        { projection: { _id: 1, organizationId: 1, [timeField]: 1 }, limit: SWEEP_BATCH },
      );
      const groups = new Map<number, string[]>();
      for (const d of batch) {
        const days = await retentionDaysOf(d.organizationId);
        const due = Math.ceil((new Date(d[timeField] as Date).getTime() + days * DAY_MS) / DAY_MS) * DAY_MS;
        const at = Math.max(due, now.getTime());
        const ids = groups.get(at);
        if (ids) ids.push(d._id);
        else groups.set(at, [d._id]);
      }
      for (const [at, ids] of groups) await c.updateMany({ _id: { $in: ids } }, { $set: expiryOf(new Date(at)) });
      dated += batch.length;
      if (batch.length < SWEEP_BATCH) break;
    }
  }
  return dated;
}

/** The indexes, then a sweep shortly after start and every `intervalMs` (default hourly) until stop(). */
export async function startTraceSweeper(options: {
  store: Store;
  collections: TraceCollections;
  /** Dates what was stored before retention existed (once, then remembered in the store). */
  retention: Pick<TraceRetention, "retentionDays">;
  logger: Logger;
  intervalMs?: number;
}): Promise<Sweeper> {
  await ensureRetentionIndexes(options.store);
  // Each sweep looks back to the day before the last one that ended (kept in the store, so a
  // restart does not look back over the longest retention again); the very first, that far.
  const sweeps = options.store.collection<{ _id: string; sweptAt: Date }>("trace_sweeps");
  return startSweeper({
    logger: options.logger,
    what: "traces",
    intervalMs: options.intervalMs,
    sweep: async () => {
      const now = new Date();
      if (!(await sweeps.findOne({ _id: "undated" }))) {
        const dated = await dateUndatedTraces(options.collections, options.retention.retentionDays, now);
        if (dated > 0) options.logger.info({ dated }, "traces stored before retention existed now expire");
        await sweeps.updateOne({ _id: "undated" }, { $set: { sweptAt: now } }, { upsert: true });
      }
      const last = (await sweeps.findOne({ _id: "traces" }))?.sweptAt.getTime();
      const days = last === undefined ? FIRST_SWEEP_DAYS : Math.ceil((now.getTime() - last) / DAY_MS) + 1;
      const deleted = await sweepExpiredTraces(options.collections, now, Math.min(days, FIRST_SWEEP_DAYS));
      await sweeps.updateOne({ _id: "traces" }, { $set: { sweptAt: now } }, { upsert: true });
      return deleted;
    },
  });
}

export type TraceRetention = ReturnType<typeof createTraceRetention>;

export function createTraceRetention(deps: { store: Store; identityAuth: IdentityAuth; now?: () => Date }) {
  const settings = settingsCollection(deps.store);
  const now = deps.now ?? (() => new Date());
  const cache = new Map<string, { days: number; until: number }>();

  async function retentionDays(organizationId: string): Promise<number> {
    const cached = cache.get(organizationId);
    if (cached && cached.until > Date.now()) return cached.days;
    const doc = await settings.findOne({ _id: organizationId });
    const days = doc?.retentionDays ?? RETENTION_DAYS.default;
    if (cache.size >= 10_000) cache.clear();
    cache.set(organizationId, { days, until: Date.now() + RETENTION_CACHE_MS });
    return days;
  }

  const required = (organizationId: string) => {
    if (organizationId === "")
      throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
  };

  return {
    retentionDays,

    /** When what the organization stores now expires. */
    async expiresAt(organizationId: string): Promise<Date> {
      return new Date(now().getTime() + (await retentionDays(organizationId)) * DAY_MS);
    },

    /** Any member of the organization; API keys with `traces:read`. */
    async get(principal: Principal, organizationId: string): Promise<TraceSettings> {
      required(organizationId);
      await deps.identityAuth.authorize(principal, { organizationId, scope: "traces:read", requireAi: false });
      const doc = await settings.findOne({ _id: organizationId });
      return {
        organizationId,
        retentionDays: doc?.retentionDays ?? RETENTION_DAYS.default,
        updatedAt: doc?.updatedAt ?? null,
      };
    },

    /** Owners and admins (users: an API key cannot change how long its own traces are kept). */
    async update(principal: Principal, organizationId: string, days: number): Promise<TraceSettings> {
      required(organizationId);
      if (!Number.isInteger(days) || days < RETENTION_DAYS.min || days > RETENTION_DAYS.max) {
        const issue = `must be a whole number of days between ${RETENTION_DAYS.min} and ${RETENTION_DAYS.max}`;
        throw invalidArgument(`retentionDays ${issue}`, [{ field: "retentionDays", issue }]);
      }
      const decision = await deps.identityAuth.authorize(principal, {
        organizationId,
        scope: "traces:write",
        requireAi: false,
      });
      if (principal.type !== "user" || (decision.role !== "owner" && decision.role !== "admin"))
        throw permissionDenied("only organization owners and admins change trace retention");
      const updatedAt = now();
      await settings.updateOne({ _id: organizationId }, { $set: { retentionDays: days, updatedAt } }, { upsert: true });
      cache.set(organizationId, { days, until: Date.now() + RETENTION_CACHE_MS });
      return { organizationId, retentionDays: days, updatedAt };
    },
  };
}
