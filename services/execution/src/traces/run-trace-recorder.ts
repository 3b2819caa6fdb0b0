/**
 * Records Kiln's own runs as traces off the run path: a stored run is appended to memory (the
 * only cost the caller pays), and its trace is written in the background, in batches. A run that
 * started its own trace is written as the trace's summary only (its spans are built from the run
 * when the trace is read: run-trace-reads.ts); a run in a trace it shares, as its spans.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { newId } from "@kiln/kit/ids";
import type { Logger } from "@kiln/kit/logger";
import type { ModelCatalog } from "@kiln/models/catalog";
import { approximateBytes } from "../runs/resolve-cache.js";
import type { RunDoc } from "../store/run-store.js";
import type { OtlpExporter } from "./otlp-exporter.js";
import { runSpans, runTraceSummaryOf } from "./run-spans.js";
import { type RunTraceContext, runTraceContextOf } from "./run-trace-context.js";
import type { TraceRetention } from "./trace-retention.js";
import type { SpanDoc, TraceCollections } from "./trace-store.js";
import { storeSpanDocs } from "./trace-writes.js";

/** Runs waiting beyond this are dropped (and logged): a store that cannot keep up never grows memory without bound. */
const MAX_PENDING = 10_000;
/**
 * Nor beyond this many bytes of waiting runs (their inputs and outputs, strings at two bytes a
 * character): ten thousand runs of large prompts would not fit the image's 128 MB old space.
 */
export const MAX_PENDING_BYTES = 16 * 1024 * 1024;
/** Summaries written by one insertMany (one transaction): a few milliseconds of the event loop. */
const SUMMARIES_PER_WRITE = 64;
/** How long a run waits in memory before its batch is written (a trace is readable within about this). */
const FLUSH_DELAY_MS = 250;

export type RunTraceRecorder = ReturnType<typeof createRunTraceRecorder>;
type Pending = { run: RunDoc; trace: RunTraceContext; bytes: number };

/**
 * A run whose trace holds only its own spans is new: its summary is written with the batch's one
 * insertMany. A run under a caller's span, or an agent run (its steps' child runs are stored in
 * its trace, agent-steps.ts), shares its trace: stored like ingested spans, the summary rebuilt
 * from all.
 */
const ownTrace = (b: Pending) => b.trace.parentSpanId === "" && b.run.kind !== "agent";

export function createRunTraceRecorder(deps: {
  collections: TraceCollections;
  models: ModelCatalog;
  logger: Logger;
  retention: TraceRetention;
  /** Also sends the spans to an OTLP endpoint (OTEL_EXPORTER_OTLP_*). */
  exporter?: OtlpExporter;
  /** Most bytes of runs waiting to be written; default MAX_PENDING_BYTES. */
  maxPendingBytes?: number;
}) {
  const maxPendingBytes = deps.maxPendingBytes ?? MAX_PENDING_BYTES;
  let pending: Pending[] = [];
  let pendingBytes = 0;
  let flushing: Promise<void> | null = null;

  /**
   * One batch: the runs that started their own trace go in with one insertMany of their summaries
   * (their spans only to the exporter, when there is one); a run that shares its trace is stored
   * like ingested spans (its summary rebuilt with the others').
   */
  async function flushOnce(): Promise<void> {
    const batch = pending;
    pending = [];
    pendingBytes = 0;
    // Each organization's retention, read once per batch (and cached: trace-retention.ts).
    const organizations = [...new Set(batch.map((b) => b.run.organizationId))];
    const dates = await Promise.all(organizations.map((o) => deps.retention.expiresAt(o))).catch((e: unknown) => {
      deps.logger.warn({ err: e, runs: batch.length }, "run traces were not stored");
      return undefined;
    });
    if (!dates) return;
    const expiry = new Map(organizations.map((o, i) => [o, dates[i] as Date]));
    const spansOf = (b: Pending): SpanDoc[] => runSpans(b.run, b.trace, deps.models, expiry.get(b.run.organizationId));
    const own = batch.filter(ownTrace);
    const shared = batch.filter((b) => !ownTrace(b));
    if (deps.exporter && own.length > 0) deps.exporter.enqueue(own.flatMap(spansOf));
    for (let at = 0; at < own.length; at += SUMMARIES_PER_WRITE) {
      const some = own.slice(at, at + SUMMARIES_PER_WRITE);
      // Between two writes the runs' requests get their turn: a large batch does not hold the loop.
      if (at > 0) await nextTurn();
      try {
        const clashed = await deps.collections.traces.insertUnordered(
          some.map((b) => ({
            _id: newId("trc"),
            ...runTraceSummaryOf(b.run, b.trace, deps.models, expiry.get(b.run.organizationId)),
          })),
        );
        // Spans of such a trace came in first (a caller that had its traceparent): that run is
        // stored with its spans then, the trace's summary rebuilt from all.
        for (const i of clashed) shared.push(some[i] as Pending);
      } catch (e) {
        deps.logger.warn({ err: e, runs: some.length }, "run traces were not stored");
      }
    }
    for (const b of shared) {
      try {
        const spans = spansOf(b);
        if (!ownTrace(b)) deps.exporter?.enqueue(spans);
        await storeSpanDocs(deps.collections, b.run.organizationId, spans);
      } catch (e) {
        deps.logger.warn({ err: e, runId: b.run._id }, "the run's trace was not stored");
      }
    }
  }

  function schedule(): void {
    if (flushing) return;
    flushing = (async () => {
      // Off the caller's turn (its answer leaves first), and runs of the next moment join the batch.
      await new Promise((resolve) => setTimeout(resolve, FLUSH_DELAY_MS));
      while (pending.length > 0) await flushOnce();
      flushing = null;
    })();
  }

  return {
    /** The hook of a stored run (store-run.ts): an in-memory append. */
    record(run: RunDoc, trace: RunTraceContext | undefined): void {
      const bytes = approximateBytes(run);
      if (pending.length >= MAX_PENDING || pendingBytes + bytes > maxPendingBytes) {
        deps.logger.warn({ runId: run._id }, "run traces are behind: this run's trace is dropped");
        return;
      }
      pendingBytes += bytes;
      pending.push({ run, trace: trace ?? runTraceContextOf(undefined), bytes });
      schedule();
    },
    /** Resolves once every recorded run's trace is stored (closing). */
    async drain(): Promise<void> {
      while (flushing) await flushing;
      await deps.exporter?.drain();
    },
  };
}
