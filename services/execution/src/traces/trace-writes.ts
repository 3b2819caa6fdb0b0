/**
 * Writing spans (ingested, or Kiln's own runs joined to a caller's trace) and the summaries of
 * their traces: a span sent again (an exporter's retry) replaces itself; new spans go in with one
 * insertMany, new summaries with another, so an export of hundreds of spans is a few statements.
 */
import { newId } from "@kiln/kit/ids";
import { isDuplicateKeyError } from "@kiln/kit/store";
import type { SpanDoc, TraceCollections, TraceDoc } from "./trace-store.js";
import { rebuildSession, summaryOf } from "./trace-summary.js";

const byStart = (a: SpanDoc, b: SpanDoc) => a.startTime.getTime() - b.startTime.getTime();

/**
 * Rebuilds the summaries of these traces from all their spans, then the sessions they are in (and
 * those they left). A trace without a summary has no stored span but these (every store writes
 * the summary right after the spans): its summary comes from them without a read; the others read
 * their spans (one read per trace, by its index).
 */
async function summarize(collections: TraceCollections, organizationId: string, docs: SpanDoc[]) {
  const { spans, traces } = collections;
  const incoming = new Map<string, SpanDoc[]>();
  for (const d of docs) incoming.set(d.traceId, [...(incoming.get(d.traceId) ?? []), d]);
  const rebuilt = await Promise.all(
    [...incoming].map(async ([traceId, own]) => {
      const current = await traces.findOne({ organizationId, traceId }, { projection: { _id: 1 } });
      const all = current
        ? await spans.find({ organizationId, traceId }, { sort: { startTime: 1 } })
        : own.sort(byStart);
      return { traceId, all, current };
    }),
  );
  const fresh = rebuilt.filter((r) => !r.current && r.all.length > 0);
  const touched = new Set<string>();
  try {
    const summaries = fresh.map((r) => ({ _id: newId("trc"), ...summaryOf(r.all) }));
    if (summaries.length > 0) await traces.insertMany(summaries);
    for (const t of summaries) touched.add(t.sessionId);
  } catch (e) {
    // Another ingestion of the same trace made its summary meanwhile: upserted one by one below.
    if (!isDuplicateKeyError(e)) throw e;
    for (const r of fresh) {
      r.current = { _id: "" } as TraceDoc;
      r.all = await spans.find({ organizationId, traceId: r.traceId }, { sort: { startTime: 1 } });
    }
  }
  for (const r of rebuilt.filter((r) => r.current && r.all.length > 0)) {
    const summary = summaryOf(r.all);
    const before = await traces.findOneAndUpdate(
      { organizationId, traceId: r.traceId },
      { $set: summary, $setOnInsert: { _id: newId("trc") } },
      { upsert: true, returnDocument: "before" },
    );
    touched.add(summary.sessionId).add(before?.sessionId ?? "");
  }
  touched.delete("");
  for (const sessionId of touched) await rebuildSession(collections, organizationId, sessionId);
}

/** Stores spans of one organization (a span sent again replaces itself), then the summaries of their traces. */
export async function storeSpanDocs(collections: TraceCollections, organizationId: string, docs: SpanDoc[]) {
  if (docs.length === 0) return;
  const byId = new Map(docs.map((d) => [d._id, d]));
  const stored = await collections.spans.find({ _id: { $in: [...byId.keys()] } }, { projection: { _id: 1 } });
  const again = new Set(stored.map((d) => d._id));
  const fresh = [...byId.values()].filter((d) => !again.has(d._id));
  try {
    if (fresh.length > 0) await collections.spans.insertMany(fresh);
  } catch (e) {
    // The same span from another request meanwhile: these are stored one by one, replacing.
    if (!isDuplicateKeyError(e)) throw e;
    for (const d of fresh) again.add(d._id);
  }
  for (const id of again) {
    const d = byId.get(id) as SpanDoc;
    await collections.spans.replaceOne({ _id: id }, d, { upsert: true });
  }
  await summarize(collections, organizationId, [...byId.values()]);
}
