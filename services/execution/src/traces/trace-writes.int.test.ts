/**
 * Span writes against both real stores (trace-writes.ts): new spans and traces go in without a
 * read, so these check what the clashes must still get right: a span sent again in a later request
 * replaces itself, a trace continued over several requests keeps one summary built from all its
 * spans, a plain retry changes nothing, and sessions follow.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Store } from "@kiln/kit/store";
import { createMongoStore } from "@kiln/kit/store/mongo";
import { createSqliteStore } from "@kiln/kit/store/sqlite";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { spanFixture } from "../../test/span-fixture.js";
import { expiryOf } from "./trace-retention.js";
import { ensureTraceIndexes, type SpanDoc, type TraceCollections, traceCollections } from "./trace-store.js";
import { storeSpanDocs } from "./trace-writes.js";

const dir = mkdtempSync(join(tmpdir(), "kiln-trace-writes-"));
const STORES: { name: string; open: () => Store }[] = [
  { name: "SQLite", open: () => createSqliteStore({ path: join(dir, "traces.db") }) },
  { name: "FerretDB", open: () => createMongoStore({ url: inject("mongoUrl"), database: `kiln_tw_${Date.now()}` }) },
];

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ORG = "org_writes";
const T0 = Date.UTC(2026, 10, 27);

/** Span `i` of a trace; span 1 is the root, the others its children. */
const span = (traceId: string, i: number, more: Partial<SpanDoc> = {}): SpanDoc =>
  spanFixture(ORG, traceId, i, { t0: T0, durationMs: 10 }, { ...expiryOf(new Date(T0 + 30 * 86_400_000)), ...more });

describe.each(STORES)("span writes ($name)", ({ open }) => {
  let store: Store;
  let c: TraceCollections;
  const summary = (traceId: string) => c.traces.findOne({ organizationId: ORG, traceId });
  const session = (sessionId: string) => c.sessions.findOne({ organizationId: ORG, sessionId });

  beforeAll(async () => {
    store = open();
    await ensureTraceIndexes(store);
    c = traceCollections(store);
  });

  afterAll(async () => {
    await store.close();
  });

  it("stores new traces with one summary each, and a plain retry changes nothing", async () => {
    const batch = [span("a1", 1), span("a1", 2), span("b1", 1, { sessionId: "s1" })];
    await storeSpanDocs(c, ORG, batch);
    const first = await summary("a1");
    expect(first).toMatchObject({ name: "span 1", spanCount: 2 });
    expect(await session("s1")).toMatchObject({ traceCount: 1 });

    // The same export again seconds later (its acknowledgement lost, the exporter retried): not rewritten.
    const retried = batch.map((s) => ({ ...s, ...expiryOf(new Date(T0 + 30 * 86_400_000 + 5_000)) }));
    await storeSpanDocs(c, ORG, retried);
    const stored = await c.spans.find({ organizationId: ORG, traceId: "a1" });
    expect(stored.map((s) => s.expiresAt)).toEqual([new Date(T0 + 30 * 86_400_000), new Date(T0 + 30 * 86_400_000)]);
    expect(await c.traces.countDocuments({ organizationId: ORG, traceId: "a1" })).toBe(1);
    expect(await summary("a1")).toMatchObject({ _id: first?._id, spanCount: 2 });
    expect(await session("s1")).toMatchObject({ traceCount: 1 });
  });

  it("replaces a span sent again with other content, and rebuilds its trace's summary", async () => {
    await storeSpanDocs(c, ORG, [span("c1", 1), span("c1", 2)]);
    await storeSpanDocs(c, ORG, [span("c1", 2, { status: "error", name: "span 2 failed" }), span("d1", 1)]);
    const spans = await c.spans.find({ organizationId: ORG, traceId: "c1" }, { sort: { startTime: 1 } });
    expect(spans.map((s) => [s.name, s.status])).toEqual([
      ["span 1", "ok"],
      ["span 2 failed", "error"],
    ]);
    expect(await summary("c1")).toMatchObject({ spanCount: 2, status: "error" });
    expect(await summary("d1")).toMatchObject({ spanCount: 1, status: "ok" });
  });

  it("keeps one summary for a trace continued over requests, its root arriving last", async () => {
    await storeSpanDocs(c, ORG, [span("e1", 2), span("e1", 3)]);
    expect(await summary("e1")).toMatchObject({ name: "span 2", spanCount: 2 });
    // The root ends last, so it is exported last; with it, a new trace in the same request.
    await storeSpanDocs(c, ORG, [span("e1", 1, { sessionId: "s2" }), span("f1", 1, { sessionId: "s2" })]);
    expect(await c.traces.countDocuments({ organizationId: ORG, traceId: "e1" })).toBe(1);
    expect(await summary("e1")).toMatchObject({
      name: "span 1",
      spanCount: 3,
      sessionId: "s2",
      startTime: new Date(T0 + 1),
      endTime: new Date(T0 + 13),
    });
    expect(await session("s2")).toMatchObject({ traceCount: 2 });
  });
});
