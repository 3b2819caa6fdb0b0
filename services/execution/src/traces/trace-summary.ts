/**
 * A trace's summary from its spans, and a session's from its traces' summaries (docs/observability.md
 * "Reading traces", "Sessions"): what the lists show and filter on, rebuilt whenever a span arrives.
 */
import { createHash } from "node:crypto";
import { expiryOf } from "./trace-retention.js";
import type { SessionDoc, SpanDoc, TraceCollections, TraceDoc } from "./trace-store.js";

const sum = (values: (number | null)[]): number | null =>
  values.some((v) => v !== null) ? values.reduce<number>((a, v) => a + (v ?? 0), 0) : null;

/** The spans without a parent in the trace (the parent may be another service's, never sent). */
export function rootsOf(spans: SpanDoc[]): SpanDoc[] {
  const ids = new Set(spans.map((s) => s.spanId));
  return spans.filter((s) => s.parentSpanId === "" || !ids.has(s.parentSpanId));
}

/** The Kiln run a trace records: the first span carrying `kiln.run.id`, with its `kiln.run.label`. */
function kilnRunOf(spans: SpanDoc[]): { runId: string; label: string } {
  for (const s of spans) {
    // Most spans are not a run's: only those naming one are parsed.
    if (!s.attributes.includes('"kiln.run.id"')) continue;
    const a = JSON.parse(s.attributes) as Record<string, unknown>;
    if (typeof a["kiln.run.id"] !== "string") continue;
    return { runId: a["kiln.run.id"], label: typeof a["kiln.run.label"] === "string" ? a["kiln.run.label"] : "" };
  }
  return { runId: "", label: "" };
}

/** How far above a Kiln run's root span its caller's model call may be (the HTTP client span between). */
const CALLER_DEPTH = 3;

/**
 * The caller's model calls that a Kiln run continues, by span id, with that run's id
 * (docs/observability.md "Joined runs"): an app's client span for its call to Kiln's `/v1`, whose
 * `traceparent` made it the parent (or, through its HTTP client span, an ancestor) of the run's
 * root span. The run's own model calls carry the usage and cost; the caller's span is the same
 * call seen from outside, so it is not counted again.
 */
export function continuedByRun(spans: SpanDoc[]): Map<string, string> {
  const continued = new Map<string, string>();
  let byId: Map<string, SpanDoc> | undefined;
  for (const s of spans) {
    if (s.parentSpanId === "" || !s.attributes.includes('"kiln.run.id"')) continue;
    const runId = (JSON.parse(s.attributes) as Record<string, unknown>)["kiln.run.id"];
    if (typeof runId !== "string") continue;
    byId ??= new Map(spans.map((x) => [x.spanId, x]));
    let above = byId.get(s.parentSpanId);
    for (let depth = 0; above && depth < CALLER_DEPTH; depth++) {
      if (above.generation) {
        continued.set(above.spanId, runId);
        break;
      }
      above = byId.get(above.parentSpanId);
    }
  }
  return continued;
}

/** The latest of these expiries, and its day (what was stored before retention has none). */
function latestExpiry(times: (Date | undefined)[]): { expiresAt?: Date; expiresDay?: string } {
  const ms = times.flatMap((t) => (t ? [t.getTime()] : []));
  return ms.length > 0 ? expiryOf(new Date(Math.max(...ms))) : {};
}

/** The summary of a trace from all its spans (`spans` ordered by start time). */
export function summaryOf(spans: SpanDoc[]): Omit<TraceDoc, "_id"> {
  const first = spans[0] as SpanDoc;
  const root = rootsOf(spans)[0] ?? first;
  // A caller's span of a call a Kiln run in this trace answered is that run's call, counted there.
  const continued = continuedByRun(spans);
  const generations = spans.flatMap((s) => (s.generation && !continued.has(s.spanId) ? [s.generation] : []));
  const costs = generations.map((g) => g.costUsd);
  return {
    organizationId: first.organizationId,
    traceId: first.traceId,
    name: root.name,
    sessionId: spans.find((s) => s.sessionId !== "")?.sessionId ?? "",
    status: spans.some((s) => s.status === "error") ? "error" : root.status,
    startTime: new Date(Math.min(...spans.map((s) => s.startTime.getTime()))),
    endTime: new Date(Math.max(...spans.map((s) => s.endTime.getTime()))),
    spanCount: spans.length,
    models: [...new Set(generations.map((g) => g.responseModel || g.requestModel).filter((m) => m !== ""))],
    inputTokens: sum(generations.map((g) => g.inputTokens)),
    outputTokens: sum(generations.map((g) => g.outputTokens)),
    // Unknown as soon as one generation is unpriced: a partial sum would read as the whole cost.
    costUsd: costs.length > 0 && costs.every((c) => c !== null) ? sum(costs) : null,
    userId: spans.find((s) => s.userId)?.userId ?? "",
    ...kilnRunOf(spans),
    generationCount: generations.length,
    // A summary expires with its last span.
    ...latestExpiry(spans.map((s) => s.expiresAt)),
  };
}

/** The session of `traces` (one session's summaries, in start order). */
export function sessionSummaryOf(traces: TraceDoc[]): Omit<SessionDoc, "_id"> {
  const first = traces[0] as TraceDoc;
  // A trace without model calls costs nothing; one with an unpriced call makes the session's cost unknown.
  const priced = traces.filter((t) => (t.generationCount ?? t.models.length) > 0);
  return {
    organizationId: first.organizationId,
    sessionId: first.sessionId,
    traceCount: traces.length,
    firstTime: new Date(Math.min(...traces.map((t) => t.startTime.getTime()))),
    lastTime: new Date(Math.max(...traces.map((t) => t.endTime.getTime()))),
    inputTokens: sum(traces.map((t) => t.inputTokens)),
    outputTokens: sum(traces.map((t) => t.outputTokens)),
    costUsd: priced.every((t) => t.costUsd !== null) ? (sum(priced.map((t) => t.costUsd)) ?? 0) : null,
    userId: traces.find((t) => t.userId)?.userId ?? "",
    // A session expires with its last trace (and is rebuilt when one of its traces is swept).
    ...latestExpiry(traces.map((t) => t.expiresAt)),
  };
}

/** A session's `_id`: the same for the same organization and session id, shaped like Kiln's ids (short cursors). */
export const sessionDocId = (organizationId: string, sessionId: string) =>
  `ses_${createHash("sha256").update(`${organizationId}\n${sessionId}`).digest("hex").slice(0, 32)}`;

/**
 * Rebuilds these sessions from their traces (a session left without one is removed), read with
 * one query for all of them (on FerretDB 1.24 any read but by `_id` scans the collection: one
 * scan, not one per session).
 */
export async function rebuildSessions(
  { traces, sessions }: TraceCollections,
  organizationId: string,
  sessionIds: string[],
) {
  if (sessionIds.length === 0) return;
  const all = await traces.find({ organizationId, sessionId: { $in: sessionIds } }, { sort: { startTime: 1 } });
  for (const sessionId of sessionIds) {
    const _id = sessionDocId(organizationId, sessionId);
    const own = all.filter((t) => t.sessionId === sessionId);
    if (own.length === 0) await sessions.deleteOne({ _id });
    else await sessions.replaceOne({ _id }, { _id, ...sessionSummaryOf(own) }, { upsert: true });
  }
}
