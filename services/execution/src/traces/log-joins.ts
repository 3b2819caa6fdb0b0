/**
 * Joining GenAI log events to their spans, whichever arrives first (docs/observability.md "Logs"):
 * events of a stored span are added to it (its generation mapped again, its trace summarized
 * again); events of a span not stored yet wait in `trace_pending_logs` (bounded) and join the span
 * when it arrives. Ingestions of one process take turns (ingest-limiter.ts), so a span and its
 * events arriving together in two requests are joined either way.
 */
import { decodeJson, encodeJson } from "@kiln/kit/store";
import type { ModelCatalog } from "@kiln/models/catalog";
import { generationOf, type SpanEvent } from "./genai-mapping.js";
import { asSpanEvents, type LogEvent, mergeLogEvents, type SpanLogs } from "./log-events.js";
import { expiryOf } from "./trace-retention.js";
import type { PendingLogsDoc, SpanDoc, TraceCollections } from "./trace-store.js";
import { type MissingSpans, storeSpanDocs } from "./trace-writes.js";

export const LOG_LIMITS = {
  /** GenAI events kept per span (a chat call has one per message and choice). */
  eventsPerSpan: 256,
  /** Spans of an organization whose events wait for them. */
  pendingSpansPerOrganization: 10_000,
  /** How long events wait for their span, after which the sweep deletes them. */
  pendingMs: 24 * 3_600_000,
} as const;

const eventsOf = (text: string | undefined): LogEvent[] => (text ? decodeJson<LogEvent[]>(text) : []);

/** The span with these log events, its generation mapped again from its attributes, events and them. */
export function withLogEvents(doc: SpanDoc, logEvents: LogEvent[], models: ModelCatalog): SpanDoc {
  const events = [...decodeJson<SpanEvent[]>(doc.events), ...asSpanEvents(logEvents)];
  return {
    ...doc,
    logEvents: encodeJson(logEvents),
    generation: generationOf(decodeJson(doc.attributes), events, models),
  };
}

/**
 * Stores one export's log events: joined to the spans already stored (then their traces are
 * summarized again), else kept until their span arrives. Refused (OTLP's partial success): events
 * beyond `eventsPerSpan` for a span, and those of a new span once `pendingSpansPerOrganization` wait.
 */
export async function storeLogEvents(
  collections: TraceCollections,
  organizationId: string,
  bySpan: Map<string, SpanLogs>,
  models: ModelCatalog,
  missingSpans?: MissingSpans,
): Promise<{ rejected: number; reason: string }> {
  const { spans, pendingLogs } = collections;
  let rejected = 0;
  let reason = "";
  const capped = (merged: LogEvent[]) => {
    const over = merged.length - LOG_LIMITS.eventsPerSpan;
    if (over <= 0) return merged;
    rejected += over;
    reason ||= `more than ${LOG_LIMITS.eventsPerSpan} GenAI events for one span`;
    return merged.slice(0, LOG_LIMITS.eventsPerSpan);
  };
  let pendingCount: number | undefined;
  const joined: SpanDoc[] = [];
  for (const group of bySpan.values()) {
    const _id = `${organizationId}:${group.traceId}:${group.spanId}`;
    // One lookup by `_id` each (found from the primary key in every store).
    const span = await spans.findOne({ _id });
    if (span) {
      joined.push(withLogEvents(span, capped(mergeLogEvents(eventsOf(span.logEvents), group.events)), models));
      continue;
    }
    const waiting = await pendingLogs.findOne({ _id });
    if (!waiting) {
      pendingCount ??= await pendingLogs.countDocuments({ organizationId });
      if (pendingCount >= LOG_LIMITS.pendingSpansPerOrganization) {
        rejected += group.events.length;
        reason ||= `the log records of ${LOG_LIMITS.pendingSpansPerOrganization} spans not received yet already wait`;
        continue;
      }
      pendingCount++;
    }
    const doc: PendingLogsDoc = {
      _id,
      organizationId,
      traceId: group.traceId,
      spanId: group.spanId,
      logEvents: encodeJson(capped(mergeLogEvents(eventsOf(waiting?.logEvents), group.events))),
      ...expiryOf(new Date(Date.now() + LOG_LIMITS.pendingMs)),
    };
    await pendingLogs.replaceOne({ _id }, doc, { upsert: true });
  }
  await storeSpanDocs(collections, organizationId, joined, missingSpans);
  return { rejected, reason };
}

/**
 * The incoming spans with the events that waited for them (one read for all), and a function
 * that deletes those once the spans are stored.
 */
export async function withPendingLogs(
  collections: TraceCollections,
  organizationId: string,
  docs: SpanDoc[],
  models: ModelCatalog,
): Promise<{ docs: SpanDoc[]; joined: () => Promise<void> }> {
  const none = { docs, joined: async () => {} };
  if (docs.length === 0) return none;
  const { pendingLogs } = collections;
  const waiting = await pendingLogs.find({ organizationId, _id: { $in: docs.map((d) => d._id) } });
  if (waiting.length === 0) return none;
  const byId = new Map(waiting.map((p) => [p._id, eventsOf(p.logEvents)]));
  return {
    docs: docs.map((d) => {
      const events = byId.get(d._id);
      return events ? withLogEvents(d, mergeLogEvents(eventsOf(d.logEvents), events), models) : d;
    }),
    joined: async () => {
      await pendingLogs.deleteMany({ organizationId, _id: { $in: [...byId.keys()] } });
    },
  };
}

/**
 * A span sent again keeps the log events joined to its stored copy (the exporter's span carries
 * none of them).
 */
export const keepingLogEvents =
  (models: ModelCatalog) =>
  (before: SpanDoc, incoming: SpanDoc): SpanDoc =>
    before.logEvents && !incoming.logEvents
      ? withLogEvents(incoming, mergeLogEvents(eventsOf(before.logEvents), []), models)
      : incoming;
