/**
 * The ledger's writer against a real nats-server and FerretDB (and the in-process bus and memory
 * store): every run counted once, whatever comes twice — a run.completed published again after
 * the bus's duplicate window, a flush applied again, a ledger that died between journaling a flush
 * and finishing it while its messages were delivered again to another.
 */

import { runCompletedSubject } from "@kiln/contracts/bus-names";
import type { Bus } from "@kiln/kit/bus";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import { createNatsBus } from "@kiln/kit/bus/nats";
import { createLogger } from "@kiln/kit/logger";
import type { Store } from "@kiln/kit/store";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { createMongoStore } from "@kiln/kit/store/mongo";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { promptRunFixture } from "../../test/prompt-run-fixture.js";
import { RUNS_STREAM, runCompletedPayload } from "../events/run-events.js";
import { type RunDoc, runCollection } from "../store/run-store.js";
import { packEntries } from "./usage-journal.js";
import { createUsageLedger, type UsageLedger } from "./usage-ledger.js";
import { usageEntryOf } from "./usage-rows.js";
import {
  applyPeriodDelta,
  CLAIM_RETENTION_SECONDS,
  periodDeltasOf,
  periodIdOf,
  readScopeUsage,
  startClaimSweeper,
  type UsageCollections,
  usageCollections,
} from "./usage-store.js";

const logger = createLogger({ name: "test", level: "silent" });

const BACKENDS = [
  {
    name: "nats-server and FerretDB",
    bus: () => createNatsBus({ url: inject("natsUrl"), name: "usage-ledger-test", prefix: `usg${Date.now()}` }),
    store: () => createMongoStore({ url: inject("mongoUrl"), database: `kiln_usage_${Date.now()}` }),
  },
  {
    name: "the in-process bus and the memory store",
    bus: async () => createMemoryBus(),
    store: async () => createMemoryStore(),
  },
];

let sequence = 0;
/** A stored run with a price: 1 input token, 2 output, $0.01. */
function pricedRun(organizationId: string): RunDoc {
  const id = `run_${Date.now().toString(16).padStart(12, "0")}${(sequence++).toString(16).padStart(20, "0")}`;
  return { ...promptRunFixture(id, organizationId), estimatedCostUsd: 0.01 };
}

async function until(check: () => Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.each(BACKENDS)("the usage ledger's writer ($name)", (backend) => {
  let bus: Bus;
  let store: Store;
  let collections: UsageCollections;
  const ledgers: UsageLedger[] = [];

  const newLedger = () => {
    const ledger = createUsageLedger({
      collections,
      runs: runCollection(store),
      bus,
      logger,
      connectionIdOf: async () => "",
      flushIntervalMs: 50,
    });
    ledgers.push(ledger);
    return ledger;
  };
  const month = () => new Date().toISOString().slice(0, 7);
  const spent = (organizationId: string) =>
    readScopeUsage(collections.periods, organizationId, month(), "organization");
  const storeAndPublish = async (runs: RunDoc[], msgSuffix = "") => {
    for (const run of runs) await runCollection(store).insertOne(run);
    for (const run of runs)
      await bus.publish(runCompletedSubject(run.kind), runCompletedPayload(run), { msgId: run._id + msgSuffix });
  };

  beforeAll(async () => {
    bus = await backend.bus();
    store = await backend.store();
    collections = usageCollections(store);
    await bus.ensureStream(RUNS_STREAM);
  });

  afterAll(async () => {
    for (const l of ledgers) await l.stop();
    await bus?.close();
    await store?.close();
  });

  it("counts a run whose run.completed is published again (a relay past the duplicate window) once", async () => {
    const ledger = newLedger();
    await ledger.start();
    const runs = Array.from({ length: 30 }, () => pricedRun("org_again"));
    await storeAndPublish(runs);
    // The same events again under other message ids: the bus cannot tell them apart.
    for (const run of runs.slice(0, 10))
      await bus.publish(runCompletedSubject(run.kind), runCompletedPayload(run), { msgId: `${run._id}:again` });
    await until(async () => (await spent("org_again")).runs >= 30);
    await new Promise((r) => setTimeout(r, 400));
    const total = await spent("org_again");
    expect(total.runs).toBe(30);
    expect(total.outputTokens).toBe(60);
    expect(Math.round(total.costUsd * 100)).toBe(30);
    await ledger.stop();
  });

  it("counts a run this process stored from what it stored, without reading it back, and the same as a read", async () => {
    const reads: string[] = [];
    const runs = runCollection(store);
    const counting = {
      ...runs,
      findOne: (filter: { _id?: string }, options?: object) => {
        reads.push(String(filter._id));
        return runs.findOne(filter, options);
      },
    } as typeof runs;
    const ledger = createUsageLedger({
      collections,
      runs: counting,
      bus,
      logger,
      connectionIdOf: async () => "cnn_x",
      flushIntervalMs: 50,
    });
    ledgers.push(ledger);
    await ledger.start();
    const mine = Array.from({ length: 5 }, () => pricedRun("org_stored_here"));
    const others = Array.from({ length: 5 }, () => pricedRun("org_stored_here"));
    for (const run of mine) ledger.stored(run);
    await storeAndPublish([...mine, ...others]);
    await until(async () => (await spent("org_stored_here")).runs >= 10);
    const total = await spent("org_stored_here");
    expect(total.runs).toBe(10);
    expect(total.outputTokens).toBe(20);
    expect(Math.round(total.costUsd * 100)).toBe(10);
    // Only the runs another process stored were read.
    expect(reads.sort()).toEqual(others.map((r) => r._id).sort());
    const byConnection = await readScopeUsage(collections.periods, "org_stored_here", month(), "connection:cnn_x");
    expect(byConnection.runs).toBe(10);
    await ledger.stop();
  });

  it("applies one flush to a document once, however often it is applied", async () => {
    const entries = [pricedRun("org_twice"), pricedRun("org_twice")].map((r) => usageEntryOf(r, ""));
    const [day, monthly] = periodDeltasOf(entries);
    expect(day && monthly).toBeTruthy();
    if (!day || !monthly) return;
    expect(await applyPeriodDelta(collections.periods, "uinstance", 1, day)).toBe(true);
    expect(await applyPeriodDelta(collections.periods, "uinstance", 1, day)).toBe(false);
    expect(await applyPeriodDelta(collections.periods, "uinstance", 2, day)).toBe(true);
    const doc = await collections.periods.findOne({ _id: periodIdOf("org_twice", day.period) });
    expect(doc?.totals.runs).toBe(4);
    expect(Object.values(doc?.rows ?? {})).toHaveLength(1);
  });

  it("a ledger that died mid-flush: its messages counted elsewhere and its journal finished, each run once", async () => {
    const runs = Array.from({ length: 7 }, () => pricedRun("org_crash"));
    for (const run of runs) await runCollection(store).insertOne(run);
    // What a ledger leaves when it dies after journaling a flush of the first four runs and claiming two of them.
    const dead = "udead0000";
    const createdAt = new Date(Date.now() - 120_000);
    const entries = runs.slice(0, 4).map((r) => usageEntryOf(r, ""));
    await collections.flushes.insertOne({
      _id: `${dead}:1`,
      instanceId: dead,
      seq: 1,
      packed: packEntries(entries),
      createdAt,
    });
    for (const e of entries.slice(0, 2)) await collections.claims.insertOne({ _id: e.runId, flushId: `${dead}:1` });
    // And a journal as ledgers wrote them before they were packed (its entries written out).
    const older = [usageEntryOf(runs[6] as RunDoc, "")];
    await collections.flushes.insertOne({
      _id: "uold00000:1",
      instanceId: "uold00000",
      seq: 1,
      entries: older,
      createdAt,
    });
    // Its messages were never acknowledged: delivered again, to another ledger, with the two others.
    const ledger = newLedger();
    await ledger.start(60_000);
    for (const run of runs)
      await bus.publish(runCompletedSubject(run.kind), runCompletedPayload(run), { msgId: `${run._id}:crash` });
    await until(async () => (await collections.flushes.countDocuments({})) === 0);
    await until(async () => (await spent("org_crash")).runs >= 7);
    await new Promise((r) => setTimeout(r, 300));
    await ledger.recover();
    expect((await spent("org_crash")).runs).toBe(7);
    expect((await spent("org_crash")).outputTokens).toBe(14);
    expect(await collections.claims.countDocuments({ _id: { $in: runs.map((r) => r._id) } })).toBe(7);
  });

  it("sweeps the claims of runs made more than their retention ago, by id, and keeps the others", async () => {
    const at = (msAgo: number) => (Date.now() - msAgo).toString(16).padStart(12, "0");
    const retentionMs = CLAIM_RETENTION_SECONDS * 1000;
    const old = [
      `run_${at(retentionMs + 60_000)}00000000000000000000`,
      `run_${at(retentionMs + 1_000)}0000aaaaaaaaaaaaaaaa`,
    ];
    const kept = [`run_${at(retentionMs - 60_000)}00000000000000000000`, pricedRun("org_sweep")._id];
    for (const id of [...old, ...kept]) await collections.claims.insertOne({ _id: id, flushId: "usweep:1" });
    const sweeper = startClaimSweeper(collections.claims, logger, { intervalMs: 3_600_000 });
    try {
      expect(await sweeper.runOnce()).toBe(2);
    } finally {
      await sweeper.stop();
    }
    const left = await collections.claims.find({ _id: { $in: [...old, ...kept] } });
    expect(left.map((c) => c._id).sort()).toEqual([...kept].sort());
  });
});
