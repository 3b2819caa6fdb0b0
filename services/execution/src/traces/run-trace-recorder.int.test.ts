/**
 * The recorder against the SQLite store: a run in a trace of its own is stored as its summary
 * only, its spans read back from the run; when a caller's spans reached that trace first (it had
 * the answered traceparent), the run's spans are stored with them and the trace stays whole.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@kiln/kit/logger";
import { createSqliteStore } from "@kiln/kit/store/sqlite";
import { createModelCatalog } from "@kiln/models/catalog";
import { afterAll, describe, expect, it } from "vitest";
import { promptRunFixture } from "../../test/prompt-run-fixture.js";
import { runCollection } from "../store/run-store.js";
import { runTraceContextOf } from "./run-trace-context.js";
import { spansOfTrace } from "./run-trace-reads.js";
import { createRunTraceRecorder } from "./run-trace-recorder.js";
import { createTraceRetention, ensureRetentionIndexes } from "./trace-retention.js";
import { ensureTraceIndexes, type SpanDoc, type TraceDoc, traceCollections } from "./trace-store.js";
import { storeSpanDocs } from "./trace-writes.js";

const dir = mkdtempSync(join(tmpdir(), "kiln-recorder-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const models = createModelCatalog({ configuredProviders: [] });
const noAuth = {
  verifyApiKey: () => Promise.reject(new Error("not used")),
  authorize: () => Promise.reject(new Error("not used")),
};

describe("run trace recorder (SQLite)", () => {
  it("stores a run's own trace as its summary, and keeps it whole when a caller's span came first", async () => {
    const store = createSqliteStore({ path: join(dir, "store.db") });
    await ensureTraceIndexes(store);
    await ensureRetentionIndexes(store);
    const collections = traceCollections(store);
    const runs = runCollection(store);
    const retention = createTraceRetention({ store, identityAuth: noAuth });
    const recorder = createRunTraceRecorder({
      collections,
      models,
      logger: createLogger({ name: "test", level: "silent" }),
      retention,
    });
    const organizationId = "org_recorder";
    const alone = runTraceContextOf(undefined);
    const joined = runTraceContextOf(undefined);
    // The caller's span under the second run's root span, stored before the run's trace is.
    const caller: SpanDoc = {
      _id: `${organizationId}:${joined.traceId}:${"e".repeat(16)}`,
      organizationId,
      traceId: joined.traceId,
      spanId: "e".repeat(16),
      parentSpanId: joined.spanId,
      name: "bill",
      kind: "internal",
      startTime: new Date(),
      endTime: new Date(),
      status: "ok",
      statusMessage: "",
      attributes: "{}",
      resourceAttributes: "{}",
      events: "[]",
      scopeName: "billing",
      sessionId: "",
      generation: null,
    };
    await storeSpanDocs(collections, organizationId, [caller]);
    const stored = [alone, joined].map((trace) => ({
      trace,
      run: promptRunFixture(`run_${trace.spanId}`, organizationId),
    }));
    // One batch each: in one write, the clash would send both runs to the fallback (spans stored).
    for (const { run, trace } of stored) {
      await runs.insertOne(run);
      recorder.record(run, trace);
      await recorder.drain();
    }

    const read = async (traceId: string) => {
      const summary = (await collections.traces.findOne({ organizationId, traceId })) as TraceDoc;
      return { summary, spans: await spansOfTrace({ collections, runs, models }, summary) };
    };
    const first = await read(alone.traceId);
    expect(first.summary).toMatchObject({ runId: stored[0]?.run._id, spanCount: 2, name: "run_prompt prm_x" });
    expect(first.spans.map((s) => [s.name, s.spanId === alone.spanId])).toEqual([
      ["run_prompt prm_x", true],
      ["chat echo", false],
    ]);
    expect(await collections.spans.countDocuments({ organizationId, traceId: alone.traceId })).toBe(0);

    const second = await read(joined.traceId);
    expect(second.summary).toMatchObject({ runId: stored[1]?.run._id, spanCount: 3, name: "run_prompt prm_x" });
    expect(second.spans.map((s) => s.name).sort()).toEqual(["bill", "chat echo", "run_prompt prm_x"]);
    expect(await collections.spans.countDocuments({ organizationId, traceId: joined.traceId })).toBe(3);
    await store.close();
  });
});
