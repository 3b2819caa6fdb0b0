/**
 * Records Kiln's own runs as traces off the run path: a stored run is appended to memory (the
 * only cost the caller pays), and its spans are written in the background, in batches.
 */
import { newId } from "@kiln/kit/ids";
import type { Logger } from "@kiln/kit/logger";
import type { ModelCatalog } from "../domain/model-catalog.js";
import type { RunDoc } from "../store/run-store.js";
import type { OtlpExporter } from "./otlp-exporter.js";
import { runSpans } from "./run-spans.js";
import { type RunTraceContext, runTraceContextOf } from "./run-trace-context.js";
import type { TraceRetention } from "./trace-retention.js";
import type { SpanDoc, TraceCollections } from "./trace-store.js";
import { summaryOf } from "./trace-summary.js";
import { storeSpanDocs } from "./trace-writes.js";

/** Runs waiting beyond this are dropped (and logged): a store that cannot keep up never grows memory without bound. */
const MAX_PENDING = 10_000;
/** How long a run waits in memory before its batch is written. */
const FLUSH_DELAY_MS = 200;

export type RunTraceRecorder = ReturnType<typeof createRunTraceRecorder>;

/**
 * A run whose trace holds only its own spans is new: written with the batch's one insertMany. A
 * run under a caller's span, or an agent run (its steps' child runs are stored in its trace,
 * agent-steps.ts), shares its trace: stored like ingested spans, the summary rebuilt from all.
 */
const ownTrace = (b: { run: RunDoc; trace: RunTraceContext }) => b.trace.parentSpanId === "" && b.run.kind !== "agent";

export function createRunTraceRecorder(deps: {
  collections: TraceCollections;
  models: ModelCatalog;
  logger: Logger;
  retention: TraceRetention;
  /** Also sends the spans to an OTLP endpoint (OTEL_EXPORTER_OTLP_*). */
  exporter?: OtlpExporter;
}) {
  let pending: { run: RunDoc; trace: RunTraceContext }[] = [];
  let flushing: Promise<void> | null = null;

  /**
   * One batch: a run that started its own trace is new, so its spans and summary go in with one
   * insertMany each for the whole batch; a run that joined a caller's trace is stored like
   * ingested spans (its summary is rebuilt with the caller's spans).
   */
  async function flushOnce(): Promise<void> {
    const batch = pending;
    pending = [];
    // Each organization's retention, read once per batch (and cached: trace-retention.ts).
    const organizations = [...new Set(batch.map((b) => b.run.organizationId))];
    const dates = await Promise.all(organizations.map((o) => deps.retention.expiresAt(o))).catch((e: unknown) => {
      deps.logger.warn({ err: e, runs: batch.length }, "run traces were not stored");
      return undefined;
    });
    if (!dates) return;
    const expiry = new Map(organizations.map((o, i) => [o, dates[i] as Date]));
    const spansOf = (b: (typeof batch)[number]): SpanDoc[] =>
      runSpans(b.run, b.trace, deps.models, expiry.get(b.run.organizationId));
    const own = batch.filter(ownTrace);
    try {
      const spans = own.map(spansOf);
      if (spans.length > 0) {
        deps.exporter?.enqueue(spans.flat());
        await deps.collections.spans.insertMany(spans.flat());
        await deps.collections.traces.insertMany(spans.map((s) => ({ _id: newId("trc"), ...summaryOf(s) })));
      }
    } catch (e) {
      deps.logger.warn({ err: e, runs: own.length }, "run traces were not stored");
    }
    for (const b of batch.filter((b) => !ownTrace(b))) {
      try {
        const spans = spansOf(b);
        deps.exporter?.enqueue(spans);
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
      if (pending.length >= MAX_PENDING) {
        deps.logger.warn({ runId: run._id }, "run traces are behind: this run's trace is dropped");
        return;
      }
      pending.push({ run, trace: trace ?? runTraceContextOf(undefined) });
      schedule();
    },
    /** Resolves once every recorded run's trace is stored (closing). */
    async drain(): Promise<void> {
      while (flushing) await flushing;
      await deps.exporter?.drain();
    },
  };
}
