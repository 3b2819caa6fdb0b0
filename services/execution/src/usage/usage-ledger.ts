/**
 * The usage ledger's writer (docs/usage.md "How it is kept"): a durable consumer of run.completed
 * that reads each run by id, sums the runs it holds in memory and flushes them together every
 * `flushIntervalMs` (or `maxBatch` runs); a message is acknowledged only after the flush that
 * counted it, so a crash loses nothing (unacknowledged messages come back) and counts nothing
 * twice (usage-store.ts: a run is claimed by one flush, a flush applied once per document). A run
 * this process stored is counted from what it stored (`stored`), without reading it back.
 */

import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { CONSUMERS, RUN_EVENTS } from "@kiln/contracts/bus-names";
import type { RunCompletedEvent } from "@kiln/contracts/events";
import type { Bus, BusMessage, Subscription } from "@kiln/kit/bus";
import type { Logger } from "@kiln/kit/logger";
import type { Collection } from "@kiln/kit/store";
import type { RunDoc } from "../store/run-store.js";
import { type LedgerLock, noLedgerLock } from "./ledger-lock.js";
import { packEntries, unpackEntries } from "./usage-journal.js";
import type { UsageEntry } from "./usage-rows.js";
import { usageEntryOf } from "./usage-rows.js";
import { applyPeriodDelta, periodDeltasOf, type UsageCollections, type UsageFlushDoc } from "./usage-store.js";

export const USAGE_CONSUMER = {
  stream: RUN_EVENTS.stream,
  durable: CONSUMERS.usageLedger,
  filterSubject: RUN_EVENTS.completed,
  maxAckPending: 4_000,
};

export interface UsageLedgerDeps {
  collections: UsageCollections;
  runs: Collection<RunDoc>;
  bus: Bus;
  logger: Logger;
  /** The connection a run's model belongs to ("" for the deployment's models). */
  connectionIdOf(organizationId: string, model: string | null): Promise<string>;
  /** Told, after each flush, the runs it counted per organization (the plan allowance's view). */
  onCounted?(organizationId: string, runIds: string[]): void;
  /** Shared with the views that read the ledger (ledger-lock.ts): a flush is applied and told between their reads. */
  lock?: LedgerLock;
  /** Longest a counted run waits in memory before its flush; default 500 ms. */
  flushIntervalMs?: number;
  /** Runs that start a flush at once; default 1000. */
  maxBatch?: number;
  /** A journaled flush this old is finished by whoever finds it (its ledger died); default 60 s. */
  recoverAfterMs?: number;
  now?: () => Date;
}

/** The runs stored here whose run.completed is not counted yet, at most: their entries are small. */
const MAX_RECENT = 4_096;

interface Pending {
  entry: UsageEntry;
  done: { resolve(): void; reject(e: unknown): void };
}

export function createUsageLedger(deps: UsageLedgerDeps) {
  const { collections } = deps;
  const flushIntervalMs = deps.flushIntervalMs ?? 500;
  const maxBatch = deps.maxBatch ?? 1_000;
  const recoverAfterMs = deps.recoverAfterMs ?? 60_000;
  const now = deps.now ?? (() => new Date());
  const lock = deps.lock ?? noLedgerLock;
  // Flushes of this instance are numbered; each document keeps the last one it applied.
  const instanceId = `u${randomBytes(8).toString("hex")}`;
  let seq = 0;
  let batch: Pending[] = [];
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();
  let stopped = false;
  let subscription: Subscription | undefined;
  let recovery: NodeJS.Timeout | undefined;
  // Runs this process stored, by id: their counts without a read of the run (connection id to come).
  const recent = new Map<string, UsageEntry>();

  /** Applies a journaled flush (its entries): claims its runs, adds the claimed ones, forgets the journal. */
  async function apply(flush: UsageFlushDoc, entries: UsageEntry[]): Promise<UsageEntry[]> {
    const clashed = await collections.claims.insertUnordered(
      entries.map((e) => ({ _id: e.runId, flushId: flush._id })),
    );
    const others = new Set<number>();
    for (const at of clashed) {
      const claim = await collections.claims.findOne({ _id: entries[at]?.runId });
      if (claim?.flushId !== flush._id) others.add(at);
    }
    const mine = entries.filter((_, at) => !others.has(at));
    await Promise.all(
      periodDeltasOf(mine).map((d) => applyPeriodDelta(collections.periods, flush.instanceId, flush.seq, d)),
    );
    await collections.flushes.deleteOne({ _id: flush._id });
    return mine;
  }

  function told(entries: UsageEntry[]) {
    const byOrganization = new Map<string, string[]>();
    for (const e of entries)
      byOrganization.set(e.organizationId, [...(byOrganization.get(e.organizationId) ?? []), e.runId]);
    for (const [organizationId, ids] of byOrganization) deps.onCounted?.(organizationId, ids);
  }

  /** One flush, retried until it is applied (or the ledger stops): later flushes wait behind it. */
  async function flushNow(pending: Pending[]): Promise<void> {
    const unique = [...new Map(pending.map((p) => [p.entry.runId, p.entry])).values()];
    const flush: UsageFlushDoc = { _id: "", instanceId, seq: ++seq, packed: packEntries(unique), createdAt: now() };
    flush._id = `${instanceId}:${flush.seq}`;
    for (let waitMs = 100; ; waitMs = Math.min(waitMs * 2, 5_000)) {
      try {
        await collections.flushes.replaceOne({ _id: flush._id }, flush, { upsert: true });
        await lock.apply(async () => told(await apply(flush, unique)));
        for (const p of pending) p.done.resolve();
        return;
      } catch (err) {
        if (stopped) {
          for (const p of pending) p.done.reject(err);
          return;
        }
        deps.logger.warn({ err, flush: flush._id }, "usage flush failed; retrying");
        await sleep(waitMs);
      }
    }
  }

  function flushBatch() {
    clearTimeout(timer);
    timer = undefined;
    const pending = batch;
    batch = [];
    if (pending.length > 0) chain = chain.then(() => flushNow(pending));
    return chain;
  }

  /** Resolves once the run's entry is flushed; the message is acknowledged after that. */
  function count(entry: UsageEntry): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      batch.push({ entry, done: { resolve, reject } });
      if (batch.length >= maxBatch) void flushBatch();
      else timer ??= setTimeout(() => void flushBatch(), flushIntervalMs);
    });
  }

  async function handle(msg: BusMessage): Promise<void> {
    const { runId } = msg.json<Pick<RunCompletedEvent, "runId">>();
    const known = recent.get(runId);
    if (known) {
      recent.delete(runId);
      const connectionId = await deps.connectionIdOf(known.organizationId, known.key.model || null);
      return count({ ...known, key: { ...known.key, connectionId } });
    }
    const run = await deps.runs.findOne({ _id: runId });
    // Published only once stored in a final state; a run not found is asked again later.
    if (!run) throw new Error(`run ${runId} of a run.completed not found`);
    if (run.status === "running") return;
    await count(usageEntryOf(run, await deps.connectionIdOf(run.organizationId, run.model)));
  }

  /** A run this process stored in its final state (store-run.ts, agent-runner.ts): its count needs no read. */
  function stored(run: RunDoc): void {
    if (run.status === "running") return;
    if (recent.size >= MAX_RECENT) recent.delete(recent.keys().next().value as string);
    recent.set(run._id, usageEntryOf(run, ""));
  }

  /** Finishes the journaled flushes older than recoverAfterMs (ledgers that died mid-flush), in order. */
  async function recover(): Promise<number> {
    const before = new Date(now().getTime() - recoverAfterMs);
    const stale = await collections.flushes.find({ createdAt: { $lt: before } }, { sort: { instanceId: 1, seq: 1 } });
    for (const flush of stale) {
      const entries = flush.packed ? unpackEntries(flush.packed) : (flush.entries ?? []);
      await lock.apply(async () => told(await apply(flush, entries)));
    }
    return stale.length;
  }

  return {
    instanceId,
    handle,
    stored,
    recover,
    /** Flushes what is held now (tests, shutdown). */
    flush: () => flushBatch(),
    async start(recoverEveryMs = 30_000) {
      stopped = false;
      await deps.bus.ensureConsumer(USAGE_CONSUMER);
      await recover().catch((err: unknown) => deps.logger.warn({ err }, "usage flushes not recovered yet"));
      subscription = deps.bus.consume(USAGE_CONSUMER, handle, {
        // Many runs wait on one flush: the concurrency is how many a flush may hold.
        concurrency: maxBatch,
        retryDelayMs: 500,
        onError: (err, msg) => deps.logger.warn({ err, seq: msg.seq }, "usage not counted yet; retrying"),
      });
      recovery = setInterval(() => {
        recover().catch((err: unknown) => deps.logger.warn({ err }, "usage flushes not recovered yet"));
      }, recoverEveryMs);
      recovery.unref();
    },
    async stop() {
      clearInterval(recovery);
      const stopping = subscription?.stop();
      await flushBatch();
      stopped = true;
      await stopping;
    },
  };
}

export type UsageLedger = ReturnType<typeof createUsageLedger>;
