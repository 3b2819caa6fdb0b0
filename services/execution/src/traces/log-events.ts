/**
 * GenAI events sent as OTLP log records (docs/observability.md "Logs"): the OpenTelemetry GenAI
 * instrumentations (`@opentelemetry/instrumentation-openai`, ...) write a call's messages as log
 * records emitted in the call's span, not as span events. Each record naming a GenAI event is
 * grouped under its span (trace and span id) and kept as it came; the mapping reads them as the
 * span's events.
 */
import type { ResourceLogs } from "@kiln/proto/otlp/logs";
import type { SpanEvent } from "./genai-mapping.js";
import { DETAILS_EVENT, MESSAGE_EVENTS } from "./genai-table.js";
import { anyValueToJson, attributesToJson, dateOfNanos, hexOf, type JsonValue } from "./otlp-values.js";

/** A log record as kept: its event name, time, attributes and body as they came. */
export interface LogEvent {
  name: string;
  /** ISO 8601. */
  time: string;
  attributes: Record<string, JsonValue>;
  body: JsonValue;
}

/** The GenAI events a span may have as log records: the message events and the operation details. */
export const GENAI_LOG_EVENTS: ReadonlySet<string> = new Set([...Object.keys(MESSAGE_EVENTS), DETAILS_EVENT]);

/** One span's log events, in the order they came. */
export interface SpanLogs {
  traceId: string;
  spanId: string;
  events: LogEvent[];
}

const valid = (id: Uint8Array, length: number) => id.length === length && id.some((b) => b !== 0);

/**
 * The records of an export grouped by span (`<traceId>:<spanId>`), and how many were refused with
 * the first reason: a record outside a span, or one that is not a GenAI event, is refused (Kiln
 * keeps no other logs), never dropped unsaid.
 */
export function logEventsOf(resourceLogs: readonly ResourceLogs[]): {
  bySpan: Map<string, SpanLogs>;
  rejected: number;
  reason: string;
} {
  const bySpan = new Map<string, SpanLogs>();
  let rejected = 0;
  let reason = "";
  const refuse = (why: string) => {
    rejected++;
    reason ||= why;
  };
  for (const rl of resourceLogs)
    for (const sl of rl.scopeLogs)
      for (const record of sl.logRecords) {
        if (!valid(record.traceId, 16) || !valid(record.spanId, 8)) {
          refuse("a log record outside a span (no valid trace and span id): Kiln joins GenAI events to their spans");
          continue;
        }
        const attributes = attributesToJson(record.attributes);
        const named = attributes["event.name"];
        const name = record.eventName || (typeof named === "string" ? named : "");
        if (!GENAI_LOG_EVENTS.has(name)) {
          refuse(`a log record that is not a GenAI event (event name "${name}"): Kiln keeps GenAI events only`);
          continue;
        }
        const traceId = hexOf(record.traceId);
        const spanId = hexOf(record.spanId);
        const nanos = record.timeUnixNano || record.observedTimeUnixNano;
        const event = { name, time: dateOfNanos(nanos).toISOString(), attributes, body: anyValueToJson(record.body) };
        const key = `${traceId}:${spanId}`;
        const group = bySpan.get(key);
        if (group) group.events.push(event);
        else bySpan.set(key, { traceId, spanId, events: [event] });
      }
  return { bySpan, rejected, reason };
}

/**
 * Log events as span events for the mapping: the attributes (less `event.name`) with the body's
 * fields; a `gen_ai.choice` body's `message` is the message itself (its role, content, tool calls).
 */
export function asSpanEvents(events: readonly LogEvent[]): SpanEvent[] {
  return events.map((e) => {
    const { "event.name": _name, ...attributes } = e.attributes;
    const body = e.body;
    let fields: Record<string, JsonValue> = {};
    if (body !== null && typeof body === "object" && !Array.isArray(body)) {
      const { message, ...rest } = body;
      fields =
        e.name === "gen_ai.choice" && message !== null && typeof message === "object" && !Array.isArray(message)
          ? { ...rest, ...message }
          : body;
    } else if (body !== null) fields = { content: body };
    return { name: e.name, time: e.time, attributes: { ...attributes, ...fields } };
  });
}

/** `a` with those of `b` it lacks (an exporter's retry sends the same records again), in order. */
export function mergeLogEvents(a: readonly LogEvent[], b: readonly LogEvent[]): LogEvent[] {
  const seen = new Set(a.map((e) => JSON.stringify(e)));
  const merged = [...a];
  for (const e of b) {
    const key = JSON.stringify(e);
    if (seen.has(key)) continue;
    seen.add(key);
    merged.push(e);
  }
  return merged;
}
