/**
 * The spans of runs that started their own trace, built again from the stored run when the trace
 * is read (run-trace-recorder.ts stores such a trace as its summary only): the same spans, ids
 * and times as when the run was recorded (run-spans.ts derives every id from the trace id).
 */
import type { Collection } from "@kiln/kit/store";
import type { ModelCatalog } from "@kiln/models/catalog";
import type { RunDoc } from "../store/run-store.js";
import { runSpans } from "./run-spans.js";
import { ownTraceOf } from "./run-trace-context.js";
import type { SpanDoc, TraceCollections, TraceDoc } from "./trace-store.js";
import type { MissingSpans } from "./trace-writes.js";

export interface RunTraceReads {
  collections: TraceCollections;
  runs: Collection<RunDoc>;
  models: ModelCatalog;
}

/** In start order; a run's spans starting together stay in the run's order (a parent before its children). */
const byStart = (a: SpanDoc, b: SpanDoc) => a.startTime.getTime() - b.startTime.getTime();

/** The spans of a run's trace stored as its summary only (none when the run is gone), in start order. */
export async function derivedRunSpans(deps: RunTraceReads, trace: TraceDoc): Promise<SpanDoc[]> {
  if (!trace.runId) return [];
  // By `_id` alone (FerretDB finds that without a scan); another organization's run is none.
  const run = await deps.runs.findOne({ _id: trace.runId });
  if (!run || run.organizationId !== trace.organizationId) return [];
  return runSpans(run, ownTraceOf(trace.traceId), deps.models, trace.expiresAt).sort(byStart);
}

/** A trace's spans: those stored, or those of the run it records when only its summary is. */
export async function spansOfTrace(deps: RunTraceReads, trace: TraceDoc): Promise<SpanDoc[]> {
  const { organizationId, traceId } = trace;
  const stored = await deps.collections.spans.find({ organizationId, traceId }, { sort: { startTime: 1 } });
  return stored.length > 0 ? stored : derivedRunSpans(deps, trace);
}

/**
 * The spans of the runs whose traces, stored as their summary only, spans are now sent into (a
 * caller continuing a run's answered traceparent): stored with them, so that the summary is then
 * rebuilt from all. Asked by storeSpanDocs only for traces it found continued with no span stored
 * before (rare), so the common ingestion reads nothing here.
 */
export function runSpansFor(deps: RunTraceReads): MissingSpans {
  return async (organizationId, traceIds) => {
    const runTraces = (
      await deps.collections.traces.find(
        { organizationId, traceId: { $in: traceIds } },
        { projection: { organizationId: 1, traceId: 1, runId: 1, expiresAt: 1 } },
      )
    ).filter((t) => t.runId);
    const derived: SpanDoc[] = [];
    for (const t of runTraces) derived.push(...(await derivedRunSpans(deps, t)));
    return derived;
  };
}
