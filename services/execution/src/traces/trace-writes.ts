/**
 * Writing spans (ingested, or Kiln's own runs joined to a caller's trace) and the summaries of
 * their traces: a span sent again (an exporter's retry) replaces itself. The common case, new
 * spans of new traces, is two inserts and no read: whether a span or a trace is new is told by
 * the unique index it clashes on (`insertUnordered`), not by a read first. That matters on
 * FerretDB 1.24 (SQLite), which answers every read but one by `_id` by scanning the whole
 * collection (docs/observability.md "Scale"); reads are left to spans sent again and traces
 * continued from an earlier request, one read for all of them.
 */
import { isDeepStrictEqual } from "node:util";
import { newId } from "@kiln/kit/ids";
import type { SpanDoc, TraceCollections } from "./trace-store.js";
import { rebuildSessions, summaryOf } from "./trace-summary.js";

const byStart = (a: SpanDoc, b: SpanDoc) => a.startTime.getTime() - b.startTime.getTime();

function groupByTrace(docs: SpanDoc[]): Map<string, SpanDoc[]> {
  const byTrace = new Map<string, SpanDoc[]>();
  for (const d of docs) {
    const list = byTrace.get(d.traceId);
    if (list) list.push(d);
    else byTrace.set(d.traceId, [d]);
  }
  return byTrace;
}

/**
 * The span as stored, its expiry within the same day: a retry moments later is not written again
 * (the sweep goes by the day).
 */
function sameSpan(a: SpanDoc, b: SpanDoc): boolean {
  const { expiresAt: _a, ...left } = a;
  const { expiresAt: _b, ...right } = b;
  return isDeepStrictEqual(left, right);
}

/**
 * Replaces the spans sent again whose stored copy differs, so a plain retry of an export writes
 * nothing more, and gives back all the spans of their traces as they now are (one read).
 */
async function replaceSentAgain(
  collections: TraceCollections,
  organizationId: string,
  again: SpanDoc[],
  keep: KeepFromStored = (_before, d) => d,
): Promise<Map<string, SpanDoc[]>> {
  if (again.length === 0) return new Map();
  const traceIds = [...new Set(again.map((d) => d.traceId))];
  const stored = new Map(
    (await collections.spans.find({ organizationId, traceId: { $in: traceIds } })).map((d) => [d._id, d]),
  );
  for (const incoming of again) {
    const before = stored.get(incoming._id);
    const d = before ? keep(before, incoming) : incoming;
    stored.set(d._id, d);
    if (before && sameSpan(before, d)) continue;
    await collections.spans.replaceOne({ _id: d._id }, d, { upsert: true });
  }
  return groupByTrace([...stored.values()]);
}

/**
 * Writes the summaries of traces that had spans before, from all their spans: the existing
 * summaries are found with one read and replaced by `_id` (FerretDB finds one `_id` in SQL); a
 * summary missing meanwhile is upserted. Resolves to the sessions they are in and were in.
 */
async function rewriteSummaries(
  { traces }: TraceCollections,
  organizationId: string,
  known: Map<string, SpanDoc[]>,
): Promise<string[]> {
  const existing = new Map(
    (
      await traces.find(
        { organizationId, traceId: { $in: [...known.keys()] } },
        { projection: { _id: 1, traceId: 1, sessionId: 1 } },
      )
    ).map((t) => [t.traceId, t]),
  );
  const sessions: string[] = [];
  for (const [traceId, spans] of known) {
    const summary = summaryOf(spans.sort(byStart));
    const current = existing.get(traceId);
    if (current) {
      await traces.replaceOne({ _id: current._id }, { _id: current._id, ...summary });
      sessions.push(summary.sessionId, current.sessionId);
      continue;
    }
    const before = await traces.findOneAndUpdate(
      { organizationId, traceId },
      { $set: summary, $setOnInsert: { _id: newId("trc") } },
      { upsert: true, returnDocument: "before" },
    );
    sessions.push(summary.sessionId, before?.sessionId ?? "");
  }
  return sessions;
}

/**
 * The summaries of these traces, then the sessions they are in (and those they left). A trace none
 * of whose spans was stored before gets its summary from the spans in hand, inserted; a clash on
 * its (organizationId, traceId) says an earlier request stored spans of it (every store writes the
 * summary right after the spans). Those (their spans read with one query), and the traces of spans
 * sent again (`known`, with all their spans), are rebuilt from all their spans.
 */
async function summarize(
  collections: TraceCollections,
  organizationId: string,
  docs: SpanDoc[],
  known: Map<string, SpanDoc[]>,
  missingSpans?: MissingSpans,
) {
  const { spans, traces } = collections;
  const candidates = [...groupByTrace(docs)].filter(([traceId]) => !known.has(traceId));
  const built = candidates.map(([, own]) => ({ _id: newId("trc"), ...summaryOf(own.sort(byStart)) }));
  const clashed = new Set(await traces.insertUnordered(built));
  const touched = new Set(built.filter((_, i) => !clashed.has(i)).map((t) => t.sessionId));
  const continued = candidates.filter((_, i) => clashed.has(i)).map(([traceId]) => traceId);
  if (continued.length > 0) {
    const read = groupByTrace(await spans.find({ organizationId, traceId: { $in: continued } }));
    // A trace with a summary but no span stored before these: a Kiln run's, stored as its summary only.
    const incoming = new Set(docs.map((d) => d._id));
    const bare = continued.filter((t) => (read.get(t) ?? []).every((s) => incoming.has(s._id)));
    const extra = bare.length > 0 && missingSpans ? await missingSpans(organizationId, bare) : [];
    if (extra.length > 0) {
      await spans.insertUnordered(extra);
      for (const [traceId, own] of groupByTrace(extra)) read.set(traceId, [...own, ...(read.get(traceId) ?? [])]);
    }
    for (const [traceId, all] of read) known.set(traceId, all);
  }
  if (known.size > 0) for (const s of await rewriteSummaries(collections, organizationId, known)) touched.add(s);
  touched.delete("");
  await rebuildSessions(collections, organizationId, [...touched]);
}

/**
 * The spans a trace has beside its summary when none is stored (a Kiln run's trace, stored as its
 * summary only: run-trace-reads.ts), asked for the traces spans are sent into later.
 */
export type MissingSpans = (organizationId: string, traceIds: string[]) => Promise<SpanDoc[]>;

/** What a span sent again keeps of its stored copy (the log events joined to it: log-joins.ts). */
export type KeepFromStored = (before: SpanDoc, incoming: SpanDoc) => SpanDoc;

/** Stores spans of one organization (a span sent again replaces itself), then the summaries of their traces. */
export async function storeSpanDocs(
  collections: TraceCollections,
  organizationId: string,
  docs: SpanDoc[],
  missingSpans?: MissingSpans,
  keep?: KeepFromStored,
) {
  if (docs.length === 0) return;
  const all = [...new Map(docs.map((d) => [d._id, d])).values()];
  // New spans go in with one command; those that clash on `_id` were stored by an earlier request.
  const again = (await collections.spans.insertUnordered(all)).map((i) => all[i] as SpanDoc);
  const known = await replaceSentAgain(collections, organizationId, again, keep);
  await summarize(collections, organizationId, all, known, missingSpans);
}
