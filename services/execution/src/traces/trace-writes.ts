/**
 * Writing spans (ingested, or Kiln's own runs joined to a caller's trace) and the summaries of
 * their traces: a span sent again (an exporter's retry) replaces itself; new spans go in with one
 * insertMany, new summaries with another, so an export of hundreds of spans is a few statements.
 */
import { newId } from "@kiln/kit/ids";
import { isDuplicateKeyError } from "@kiln/kit/store";
import { expiryOf } from "./trace-retention.js";
import type { SpanDoc, TraceCollections, TraceDoc } from "./trace-store.js";

const sum = (values: (number | null)[]): number | null =>
  values.some((v) => v !== null) ? values.reduce<number>((a, v) => a + (v ?? 0), 0) : null;

/** A summary expires with its last span (spans stored before retention have no `expiresAt`). */
function expiresAtOf(spans: SpanDoc[]): { expiresAt?: Date; expiresDay?: string } {
  const times = spans.flatMap((s) => (s.expiresAt ? [s.expiresAt.getTime()] : []));
  return times.length > 0 ? expiryOf(new Date(Math.max(...times))) : {};
}

/** The summary of a trace from all its spans (`spans` ordered by start time). */
export function summaryOf(spans: SpanDoc[]): Omit<TraceDoc, "_id"> {
  const first = spans[0] as SpanDoc;
  const ids = new Set(spans.map((s) => s.spanId));
  const root = spans.find((s) => s.parentSpanId === "" || !ids.has(s.parentSpanId)) ?? first;
  const generations = spans.flatMap((s) => (s.generation ? [s.generation] : []));
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
    ...expiresAtOf(spans),
  };
}

const byStart = (a: SpanDoc, b: SpanDoc) => a.startTime.getTime() - b.startTime.getTime();

/**
 * Rebuilds the summaries of these traces from all their spans. A trace without a summary has no
 * stored span but these (every store writes the summary right after the spans): its summary comes
 * from them without a read; the others read their spans (one read per trace, by its index).
 */
async function summarize({ spans, traces }: TraceCollections, organizationId: string, docs: SpanDoc[]) {
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
  try {
    if (fresh.length > 0) await traces.insertMany(fresh.map((r) => ({ _id: newId("trc"), ...summaryOf(r.all) })));
  } catch (e) {
    // Another ingestion of the same trace made its summary meanwhile: upserted one by one below.
    if (!isDuplicateKeyError(e)) throw e;
    for (const r of fresh) {
      r.current = { _id: "" } as TraceDoc;
      r.all = await spans.find({ organizationId, traceId: r.traceId }, { sort: { startTime: 1 } });
    }
  }
  for (const r of rebuilt.filter((r) => r.current && r.all.length > 0)) {
    await traces.updateOne(
      { organizationId, traceId: r.traceId },
      { $set: summaryOf(r.all), $setOnInsert: { _id: newId("trc") } },
      { upsert: true },
    );
  }
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
