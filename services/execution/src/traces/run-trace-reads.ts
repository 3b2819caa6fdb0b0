/**
 * The spans of runs that started their own trace, built again from the stored run when the trace
 * is read (run-trace-recorder.ts stores such a trace as its summary only): the same spans, ids
 * and times as when the run was recorded (run-spans.ts derives every id from the trace id).
 */
import type { Collection } from "@kiln/kit/store";
import type { ModelCatalog } from "../domain/model-catalog.js";
import type { RunDoc } from "../store/run-store.js";
import { runSpans } from "./run-spans.js";
import { ownTraceOf } from "./run-trace-context.js";
import type { SpanDoc, TraceCollections, TraceDoc } from "./trace-store.js";

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
  const run = await deps.runs.findOne({ _id: trace.runId, organizationId: trace.organizationId });
  if (!run) return [];
  return runSpans(run, ownTraceOf(trace.traceId), deps.models, trace.expiresAt).sort(byStart);
}

/** A trace's spans: those stored, or those of the run it records when only its summary is. */
export async function spansOfTrace(deps: RunTraceReads, trace: TraceDoc): Promise<SpanDoc[]> {
  const { organizationId, traceId } = trace;
  const stored = await deps.collections.spans.find({ organizationId, traceId }, { sort: { startTime: 1 } });
  return stored.length > 0 ? stored : derivedRunSpans(deps, trace);
}

/**
 * Spans arriving in traces of runs stored as their summary only: the runs' spans, to store with
 * them (the summary is then rebuilt from all, as for any trace). One read for the whole batch;
 * another per such trace (rare: a caller sending spans under a run's answered traceparent).
 */
export async function runSpansJoinedBy(
  deps: RunTraceReads,
  organizationId: string,
  incoming: SpanDoc[],
): Promise<SpanDoc[]> {
  const traceIds = [...new Set(incoming.map((d) => d.traceId))];
  if (traceIds.length === 0) return [];
  const runTraces = (
    await deps.collections.traces.find(
      { organizationId, traceId: { $in: traceIds } },
      { projection: { organizationId: 1, traceId: 1, runId: 1, expiresAt: 1 } },
    )
  ).filter((t) => t.runId);
  const derived: SpanDoc[] = [];
  for (const t of runTraces) {
    const stored = await deps.collections.spans.findOne(
      { organizationId, traceId: t.traceId },
      { projection: { _id: 1 } },
    );
    if (!stored) derived.push(...(await derivedRunSpans(deps, t)));
  }
  return derived;
}
