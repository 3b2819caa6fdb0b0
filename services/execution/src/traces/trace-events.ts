/**
 * trace.ingested (docs/events/trace.ingested.schema.json): one event per trace an ingestion stored
 * generation spans of, naming the trace and those spans, so that online evaluation can score them
 * off the ingestion's path. Written through an event outbox (an intent stored with the spans,
 * published in the background, relayed if the bus refused it), so none is lost.
 */
import { createHash } from "node:crypto";
import { TRACE_EVENTS } from "@kiln/contracts/bus-names";
import type { TraceIngestedData } from "@kiln/contracts/events";
import type { Bus } from "@kiln/kit/bus";
import {
  createEventOutbox,
  type EventIntentDoc,
  type EventOutbox,
  eventStream,
  type OutboxEvent,
  outboxEventOf,
} from "@kiln/kit/bus/outbox";
import type { Logger } from "@kiln/kit/logger";
import type { Store } from "@kiln/kit/store";
import type { SpanDoc } from "./trace-store.js";

/** Trace events: limits retention, a week. */
export const TRACE_EVENTS_STREAM = eventStream(TRACE_EVENTS.stream, [...TRACE_EVENTS.subjects]);

export function traceEventOutbox(store: Store, bus: Bus, logger: Logger): EventOutbox {
  return createEventOutbox(store.collection<EventIntentDoc>("trace_event_outbox"), bus, logger);
}

/**
 * The trace.ingested events of stored spans: one per trace with generation spans. Its id names
 * the organization, the trace and a digest of the spans, so the same batch sent again is one event
 * (the stream de-duplicates it) and online evaluation's own de-duplication does the rest.
 */
export function ingestedEvents(organizationId: string, docs: SpanDoc[], at: Date): OutboxEvent[] {
  const byTrace = new Map<string, SpanDoc[]>();
  for (const d of docs) if (d.generation) byTrace.set(d.traceId, [...(byTrace.get(d.traceId) ?? []), d]);
  return [...byTrace].map(([traceId, spans]) => {
    const digest = createHash("sha256")
      .update(spans.map((s) => s.spanId).join(","))
      .digest("hex")
      .slice(0, 16);
    const data: TraceIngestedData = {
      traceId,
      generations: spans.map((s) => ({
        spanId: s.spanId,
        name: s.name,
        requestModel: s.generation?.requestModel ?? "",
        responseModel: s.generation?.responseModel ?? "",
        sessionId: s.sessionId,
      })),
    };
    return outboxEventOf(TRACE_EVENTS.ingested, {
      type: "trace.ingested",
      sourceId: `${organizationId}:${traceId}:${digest}`,
      organizationId,
      at,
      data,
    });
  });
}
