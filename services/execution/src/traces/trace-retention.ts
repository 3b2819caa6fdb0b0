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
import type { Collection, Store } from "@kiln/kit/store";
import { type Sweeper, startSweeper } from "@kiln/kit/sweeper";
import type { TraceCollections } from "./trace-store.js";

export const RETENTION_DAYS = { default: 30, min: 1, max: 400 } as const;
const DAY_MS = 86_400_000;
/** How long a process reuses an organization's retention: a change reaches other replicas within it. */
export const RETENTION_CACHE_MS = 60_000;
/** Expired documents deleted per statement: a large backlog never holds the store (SQLite: the process) long. */
const SWEEP_BATCH = 1_000;

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

/** The `expiresAt` indexes the sweep reads by; TTL indexes on MongoDB (deleted at `expiresAt`). */
export async function ensureRetentionIndexes(store: Store): Promise<void> {
  for (const name of ["trace_spans", "traces"])
    await store.ensureIndexes(name, [{ keys: { expiresAt: 1 }, expireAfterSeconds: 0 }]);
}

async function sweepCollection(collection: Collection<{ _id: string }>, now: Date): Promise<number> {
  let deleted = 0;
  for (;;) {
    const batch = await collection.find(
      { expiresAt: { $lte: now } },
      { projection: { _id: 1 }, limit: SWEEP_BATCH, sort: { expiresAt: 1 } },
    );
    if (batch.length === 0) return deleted;
    deleted += (await collection.deleteMany({ _id: { $in: batch.map((d) => d._id) } })).deletedCount;
    if (batch.length < SWEEP_BATCH) return deleted;
  }
}

/** Deletes the spans and trace summaries whose `expiresAt` has passed, in batches; resolves to how many went. */
export async function sweepExpiredTraces(collections: TraceCollections, now = new Date()): Promise<number> {
  const spans = await sweepCollection(collections.spans as unknown as Collection<{ _id: string }>, now);
  return spans + (await sweepCollection(collections.traces as unknown as Collection<{ _id: string }>, now));
}

/** The indexes, then a sweep shortly after start and every `intervalMs` (default hourly) until stop(). */
export async function startTraceSweeper(options: {
  store: Store;
  collections: TraceCollections;
  logger: Logger;
  intervalMs?: number;
}): Promise<Sweeper> {
  await ensureRetentionIndexes(options.store);
  return startSweeper({
    logger: options.logger,
    what: "traces",
    intervalMs: options.intervalMs,
    sweep: () => sweepExpiredTraces(options.collections),
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
