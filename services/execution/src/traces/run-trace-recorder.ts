/**
 * Records Kiln's own runs as traces off the run path: a stored run is appended to memory (the
 * only cost the caller pays), and its spans are written in the background, in batches.
 */
import { newId } from "@kiln/kit/ids";
import type { Logger } from "@kiln/kit/logger";
import type { ModelCatalog } from "../domain/model-catalog.js";
import type { RunDoc } from "../store/run-store.js";
import { runSpans } from "./run-spans.js";
import { type RunTraceContext, runTraceContextOf } from "./run-trace-context.js";
import type { TraceCollections } from "./trace-store.js";
import { storeSpanDocs, summaryOf } from "./traces.js";

/** Runs waiting beyond this are dropped (and logged): a store that cannot keep up never grows memory without bound. */
const MAX_PENDING = 10_000;
/** How long a run waits in memory before its batch is written. */
const FLUSH_DELAY_MS = 200;

export type RunTraceRecorder = ReturnType<typeof createRunTraceRecorder>;

export function createRunTraceRecorder(deps: { collections: TraceCollections; models: ModelCatalog; logger: Logger }) {
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
    const own = batch.filter((b) => b.trace.parentSpanId === "");
    try {
      const spans = own.map((b) => runSpans(b.run, b.trace, deps.models));
      if (spans.length > 0) {
        await deps.collections.spans.insertMany(spans.flat());
        await deps.collections.traces.insertMany(spans.map((s) => ({ _id: newId("trc"), ...summaryOf(s) })));
      }
    } catch (e) {
      deps.logger.warn({ err: e, runs: own.length }, "run traces were not stored");
    }
    for (const { run, trace } of batch.filter((b) => b.trace.parentSpanId !== "")) {
      try {
        await storeSpanDocs(deps.collections, run.organizationId, runSpans(run, trace, deps.models));
      } catch (e) {
        deps.logger.warn({ err: e, runId: run._id }, "the run's trace was not stored");
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
    },
  };
}
