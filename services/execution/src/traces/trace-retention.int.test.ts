/**
 * Retention against both real stores (docs/observability.md "Retention"): the `expiresAt` ingested
 * and recorded spans (stored, or built from a run when read) get from their organization's setting, and the sweep that deletes what has
 * expired (in batches), leaving other organizations' spans alone.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@kiln/kit/logger";
import type { Store } from "@kiln/kit/store";
import { createMongoStore } from "@kiln/kit/store/mongo";
import { createSqliteStore } from "@kiln/kit/store/sqlite";
import { createModelCatalog } from "@kiln/models/catalog";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { promptRunFixture } from "../../test/prompt-run-fixture.js";
import { spanFixture } from "../../test/span-fixture.js";
import { runCollection } from "../store/run-store.js";
import { runTraceContextOf } from "./run-trace-context.js";
import { spansOfTrace } from "./run-trace-reads.js";
import { createRunTraceRecorder } from "./run-trace-recorder.js";
import {
  createTraceRetention,
  dateUndatedTraces,
  ensureRetentionIndexes,
  expiryOf,
  startTraceSweeper,
  sweepExpiredTraces,
  type TraceSettingsDoc,
} from "./trace-retention.js";
import { ensureTraceIndexes, type SpanDoc, type TraceDoc, traceCollections } from "./trace-store.js";
import { storeSpanDocs } from "./trace-writes.js";

const DAY = 86_400_000;
const logger = createLogger({ name: "test", level: "silent" });
const models = createModelCatalog({ configuredProviders: [] });
/** Never asked: expiresAt and the sweep need no caller. */
const noAuth = {
  verifyApiKey: () => Promise.reject(new Error("not used")),
  authorize: () => Promise.reject(new Error("not used")),
};

const dir = mkdtempSync(join(tmpdir(), "kiln-retention-"));
const STORES: { name: string; open: () => Store }[] = [
  { name: "SQLite", open: () => createSqliteStore({ path: join(dir, "traces.db") }) },
  { name: "FerretDB", open: () => createMongoStore({ url: inject("mongoUrl"), database: `kiln_ret_${Date.now()}` }) },
];

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const span = (organizationId: string, traceId: string, i: number, expiresAt: Date): SpanDoc =>
  spanFixture(organizationId, traceId, i, { t0: Date.UTC(2026, 0, 1) }, expiryOf(expiresAt));

describe.each(STORES)("trace retention ($name)", ({ open }) => {
  let store: Store;
  const at = new Date();
  const orgShort = `org_short_${Date.now()}`;
  const orgLong = `org_long_${Date.now()}`;

  beforeAll(async () => {
    store = open();
    await ensureTraceIndexes(store);
    await ensureRetentionIndexes(store);
    await store
      .collection<TraceSettingsDoc>("trace_settings")
      .insertOne({ _id: orgShort, retentionDays: 2, updatedAt: at });
  });

  afterAll(async () => {
    await store.close();
  });

  it("dates what an organization stores by its retention (30 days by default)", async () => {
    const retention = createTraceRetention({ store, identityAuth: noAuth, now: () => at });
    expect(await retention.expiresAt(orgShort)).toEqual(new Date(at.getTime() + 2 * DAY));
    expect(await retention.expiresAt(orgLong)).toEqual(new Date(at.getTime() + 30 * DAY));
  });

  it("gives a recorded run's spans and summary the organization's expiresAt", async () => {
    const collections = traceCollections(store);
    const runs = runCollection(store);
    const retention = createTraceRetention({ store, identityAuth: noAuth, now: () => at });
    const recorder = createRunTraceRecorder({ collections, models, logger, retention });
    // A run in a trace of its own (its summary stored, its spans built from the run when read),
    // and one under a caller's span (its spans stored).
    const own = runTraceContextOf(undefined);
    const joined = runTraceContextOf(`00-${"c".repeat(32)}-${"d".repeat(16)}-01`);
    for (const trace of [own, joined]) {
      const run = promptRunFixture(`run_${trace.spanId}`, orgShort);
      await runs.insertOne(run);
      recorder.record(run, trace);
    }
    await recorder.drain();
    for (const trace of [own, joined]) {
      const summary = await collections.traces.findOne({ organizationId: orgShort, traceId: trace.traceId });
      expect(summary?.expiresAt).toEqual(new Date(at.getTime() + 2 * DAY));
      const spans = await spansOfTrace({ collections, runs, models }, summary as TraceDoc);
      expect(spans.length).toBeGreaterThan(1);
      for (const s of spans) expect(s.expiresAt).toEqual(new Date(at.getTime() + 2 * DAY));
    }
    expect(await collections.spans.countDocuments({ organizationId: orgShort, traceId: own.traceId })).toBe(0);
    expect(
      await collections.spans.countDocuments({ organizationId: orgShort, traceId: joined.traceId }),
    ).toBeGreaterThan(1);
  });

  it("sweeps expired spans and summaries in batches, and nothing else", async () => {
    const collections = traceCollections(store);
    const soon = new Date(at.getTime() + 2 * DAY);
    const late = new Date(at.getTime() + 30 * DAY);
    // More expired spans than one sweep statement deletes (1,000).
    const expired = Array.from({ length: 1_205 }, (_, i) => span(orgShort, "a".repeat(32), i + 1, soon));
    await collections.spans.insertMany(expired);
    await storeSpanDocs(collections, orgShort, expired.slice(0, 2));
    await storeSpanDocs(collections, orgLong, [span(orgLong, "b".repeat(32), 1, late)]);
    const countOf = async (organizationId: string) => ({
      spans: await collections.spans.countDocuments({ organizationId }),
      traces: await collections.traces.countDocuments({ organizationId }),
    });
    const before = await countOf(orgShort);
    expect(before.spans).toBeGreaterThan(1_205);

    // Nothing has expired yet.
    expect(await sweepExpiredTraces(collections, new Date(at.getTime() + DAY), 5)).toBe(0);
    const swept = await sweepExpiredTraces(collections, new Date(at.getTime() + 3 * DAY), 5);
    expect(swept).toBe(before.spans + before.traces);
    expect(await countOf(orgShort)).toEqual({ spans: 0, traces: 0 });
    expect(await countOf(orgLong)).toEqual({ spans: 1, traces: 1 });
    expect(await sweepExpiredTraces(collections, new Date(at.getTime() + 3 * DAY), 5)).toBe(0);
  });

  it("sweeps from the day before the last sweep kept in the store, and keeps the new time", async () => {
    const collections = traceCollections(store);
    const now = Date.now();
    const sweeps = store.collection<{ _id: string; sweptAt: Date }>("trace_sweeps");
    await sweeps.insertOne({ _id: "traces", sweptAt: new Date(now - 2 * DAY) });
    const orgSweeper = `org_sweeper_${Date.now()}`;
    await collections.spans.insertMany([
      span(orgSweeper, "c".repeat(32), 1, new Date(now - DAY)),
      span(orgSweeper, "c".repeat(32), 2, new Date(now + 10 * DAY)),
    ]);
    const retention = createTraceRetention({ store, identityAuth: noAuth });
    const sweeper = await startTraceSweeper({ store, collections, retention, logger, intervalMs: 3_600_000 });
    try {
      expect(await sweeper.runOnce()).toBeGreaterThanOrEqual(1);
    } finally {
      await sweeper.stop();
    }
    expect((await collections.spans.find({ organizationId: orgSweeper })).map((s) => s.name)).toEqual(["span 2"]);
    expect((await sweeps.findOne({ _id: "traces" }))?.sweptAt.getTime()).toBeGreaterThanOrEqual(now);
  });

  it("dates what was stored before retention existed by its own time, and sweeps what is past", async () => {
    const collections = traceCollections(store);
    const now = new Date();
    const undated = (organizationId: string, traceId: string, i: number, endTime: Date): SpanDoc => {
      const { expiresAt: _at, expiresDay: _day, ...rest } = span(organizationId, traceId, i, now);
      return { ...rest, startTime: endTime, endTime };
    };
    const orgOld = `org_undated_${Date.now()}`;
    await store
      .collection<TraceSettingsDoc>("trace_settings")
      .insertOne({ _id: orgOld, retentionDays: 2, updatedAt: now });
    await collections.spans.insertMany([
      undated(orgOld, "d".repeat(32), 1, new Date(now.getTime() - 10 * DAY)),
      undated(orgOld, "d".repeat(32), 2, now),
    ]);
    const {
      expiresAt: _at,
      expiresDay: _day,
      ...summary
    } = {
      _id: `trc_undated_${Date.now()}`,
      organizationId: orgOld,
      traceId: "d".repeat(32),
      name: "old",
      sessionId: "",
      status: "ok" as const,
      startTime: new Date(now.getTime() - 10 * DAY),
      endTime: now,
      spanCount: 2,
      models: [],
      inputTokens: null,
      outputTokens: null,
      costUsd: null,
      ...expiryOf(now),
    };
    await collections.traces.insertOne(summary);
    const retention = createTraceRetention({ store, identityAuth: noAuth });
    expect(await dateUndatedTraces(collections, retention.retentionDays, now)).toBeGreaterThanOrEqual(3);
    expect(await collections.spans.countDocuments({ expiresDay: { $exists: false } })).toBe(0);
    // Its own end plus 2 days, rounded up to midnight; the one 10 days old is due now.
    const midnight = Math.ceil((now.getTime() + 2 * DAY) / DAY) * DAY;
    const spans = await collections.spans.find({ organizationId: orgOld }, { sort: { startTime: 1 } });
    expect(spans.map((s) => s.expiresAt?.getTime())).toEqual([now.getTime(), midnight]);
    expect((await collections.traces.findOne({ organizationId: orgOld }))?.expiresAt?.getTime()).toBe(midnight);
    await sweepExpiredTraces(collections, new Date(now.getTime() + 1), 1);
    expect((await collections.spans.find({ organizationId: orgOld })).map((s) => s.name)).toEqual(["span 2"]);
    // Done once: the sweeper remembers it in the store and does not look again.
    await store.collection<{ _id: string; sweptAt: Date }>("trace_sweeps").deleteMany({ _id: "undated" });
    const sweeper = await startTraceSweeper({ store, collections, retention, logger, intervalMs: 3_600_000 });
    try {
      await sweeper.runOnce();
      const again = undated(orgOld, "e".repeat(32), 3, now);
      await collections.spans.insertOne(again);
      await sweeper.runOnce();
      expect((await collections.spans.findOne({ _id: again._id }))?.expiresDay).toBeUndefined();
    } finally {
      await sweeper.stop();
    }
  });
});
