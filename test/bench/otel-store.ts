/**
 * `pnpm bench:otel-store`: where the time of one OTLP ingestion goes in the trace store
 * (docs/observability.md "Scale"), below the HTTP and RPC layers. For each store (FerretDB 1.24 on
 * SQLite, and the embedded SQLite store; BENCH_OTEL_STORES picks "ferretdb,sqlite"), the trace
 * collections are first filled with BENCH_OTEL_PREFILL spans (default 8,000, in traces of 8 in one
 * session per 64 traces, as the run path and earlier exports leave them), then BENCH_OTEL_ROUNDS
 * (default 6) batches of 256 new spans (32 traces) go through `storeSpanDocs`, then the same
 * batches are sent again (an exporter's retry), then half of each batch's traces get more spans
 * (a trace spread over two exports). Each statement is timed: the table gives, per phase, the
 * mean time of a batch and of each collection method within it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newId } from "@kiln/kit/ids";
import type { Store } from "@kiln/kit/store";
import { createMongoStore } from "@kiln/kit/store/mongo";
import { createSqliteStore } from "@kiln/kit/store/sqlite";
import { createModelCatalog } from "@kiln/models/catalog";
import { storedSpan } from "../../services/execution/src/traces/span-mapping.js";
import { timedCollections } from "../../services/execution/src/traces/store-time.js";
import { ensureRetentionIndexes, expiryOf } from "../../services/execution/src/traces/trace-retention.js";
import {
  ensureTraceIndexes,
  type SpanDoc,
  type TraceCollections,
  traceCollections,
} from "../../services/execution/src/traces/trace-store.js";
import { summaryOf } from "../../services/execution/src/traces/trace-summary.js";
import { storeSpanDocs } from "../../services/execution/src/traces/trace-writes.js";
import { startFerretDb } from "../support/servers.js";

const PREFILL = Number(process.env.BENCH_OTEL_PREFILL ?? 8_000);
const ROUNDS = Number(process.env.BENCH_OTEL_ROUNDS ?? 6);
const STORES = (process.env.BENCH_OTEL_STORES ?? "ferretdb,sqlite").split(",");
const SPANS = 256;
const PER_TRACE = 8;
const ORG = "org_bench";
const models = createModelCatalog({ configuredProviders: [] });
const expiry = expiryOf(new Date(Date.now() + 30 * 86_400_000));

let sequence = 0;
const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");

/** Spans as the OTLP benchmark sends them: a root and its model calls per trace. */
function spansOfTrace(traceId: string, count: number, sessionId: string, from = 0): SpanDoc[] {
  const now = Date.now();
  return Array.from({ length: count }, (_, i) => {
    const root = from + i === 0;
    const attributes: Record<string, string | number> = root
      ? { "http.route": "/checkout", ...(sessionId && { "session.id": sessionId }) }
      : {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "openai",
          "gen_ai.request.model": "gpt-4o-mini",
          "gen_ai.usage.input_tokens": 120,
          "gen_ai.usage.output_tokens": 40,
        };
    const doc = storedSpan(
      {
        organizationId: ORG,
        traceId,
        spanId: hex(++sequence, 16),
        parentSpanId: root ? "" : `${traceId.slice(0, 16)}`,
        name: root ? "checkout" : "chat gpt-4o-mini",
        kind: root ? "server" : "client",
        startTime: new Date(now + from + i),
        endTime: new Date(now + from + i + 5),
        status: "unset",
        statusMessage: "",
        attributes,
        resourceAttributes: { "service.name": "bench-app" },
        events: [],
        scopeName: "",
      },
      models,
    );
    return { ...doc, ...expiry };
  });
}

const newTraceId = () => hex(++sequence, 32);

/** Times every call of every method of the collections, by "collection.method". */
const timed = (collections: TraceCollections, times: Map<string, number>): TraceCollections =>
  timedCollections(collections, (ms, statement) => times.set(statement, (times.get(statement) ?? 0) + ms));

async function prefill(collections: TraceCollections) {
  for (let done = 0; done < PREFILL; ) {
    const traces = Array.from({ length: Math.min(SPANS, PREFILL - done) / PER_TRACE }, (_, i) =>
      spansOfTrace(newTraceId(), PER_TRACE, `ses-${Math.floor((done / PER_TRACE + i) / 64)}`),
    );
    await collections.spans.insertMany(traces.flat());
    await collections.traces.insertMany(traces.map((t) => ({ _id: newId("trc"), ...summaryOf(t) })));
    done += SPANS;
  }
}

async function phase(label: string, collections: TraceCollections, batches: SpanDoc[][]) {
  const times = new Map<string, number>();
  const store = timed(collections, times);
  const t = performance.now();
  for (const batch of batches) await storeSpanDocs(store, ORG, batch);
  const total = (performance.now() - t) / batches.length;
  const parts = [...times]
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => `${name} ${(ms / batches.length).toFixed(0)}`)
    .join(", ");
  console.log(`| ${label} | ${total.toFixed(0)} | ${parts} |`);
}

async function measure(name: string, store: Store) {
  await ensureTraceIndexes(store);
  await ensureRetentionIndexes(store);
  const collections = traceCollections(store);
  const t = performance.now();
  await prefill(collections);
  console.log(`\n### ${name}: ${PREFILL} spans stored first (${((performance.now() - t) / 1000).toFixed(1)} s)\n`);
  console.log("| phase (256 spans, 32 traces) | ms per batch | ms per batch in each statement |");
  console.log("|---|---:|---|");
  const fresh = Array.from({ length: ROUNDS }, (_, r) =>
    Array.from({ length: SPANS / PER_TRACE }, (_, i) =>
      spansOfTrace(newTraceId(), PER_TRACE, i % 4 === 0 ? `ses-new-${r}-${i % 8}` : ""),
    ).flat(),
  );
  await phase("new traces", collections, fresh);
  await phase("sent again", collections, fresh);
  const more = fresh.map((batch) =>
    Array.from({ length: SPANS / PER_TRACE / 2 }, (_, i) => {
      const first = batch[i * 2 * PER_TRACE] as SpanDoc;
      return spansOfTrace(first.traceId, PER_TRACE, "", PER_TRACE);
    }).flat(),
  );
  await phase("traces continued", collections, more);
}

console.log(`trace store statements per ingestion: ${ROUNDS} batches per phase`);
if (STORES.includes("ferretdb")) {
  const ferret = await startFerretDb();
  const store = createMongoStore({ url: ferret.url, database: "bench" });
  try {
    await measure("FerretDB 1.24 (SQLite backend)", store);
  } finally {
    await store.close();
    await ferret.stop({ removeData: true });
  }
}
if (STORES.includes("sqlite")) {
  const dir = mkdtempSync(join(tmpdir(), "kiln-otel-store-"));
  const store = createSqliteStore({ path: join(dir, "store.db") });
  try {
    await measure("embedded SQLite store", store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
