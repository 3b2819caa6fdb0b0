import { encodeJson } from "@kiln/kit/store";
import type { ModelCatalog } from "@kiln/models/catalog";
import type { ResourceSpans, Span } from "@kiln/proto/otlp/trace";
import { Span_SpanKind, Status_StatusCode } from "@kiln/proto/otlp/trace";
import { generationOf, type SpanEvent, sessionOf, toolCallOfSpan, userOf } from "./genai-mapping.js";
import { attributesToJson, dateOfNanos, hexOf, type JsonValue } from "./otlp-values.js";
import type { SpanDoc } from "./trace-store.js";
import { unmappedAttributesOf } from "./unmapped-attributes.js";

const KINDS: Record<Span_SpanKind, string> = {
  [Span_SpanKind.UNSPECIFIED]: "unspecified",
  [Span_SpanKind.INTERNAL]: "internal",
  [Span_SpanKind.SERVER]: "server",
  [Span_SpanKind.CLIENT]: "client",
  [Span_SpanKind.PRODUCER]: "producer",
  [Span_SpanKind.CONSUMER]: "consumer",
};

const STATUSES: Record<Status_StatusCode, SpanDoc["status"]> = {
  [Status_StatusCode.UNSET]: "unset",
  [Status_StatusCode.OK]: "ok",
  [Status_StatusCode.ERROR]: "error",
};

/** Why OTLP's partial success refuses a span; empty when it is kept. */
export function spanIssue(span: Span): string {
  if (span.traceId.length !== 16 || span.traceId.every((b) => b === 0)) return "a span without a valid trace id";
  if (span.spanId.length !== 8 || span.spanId.every((b) => b === 0)) return "a span without a valid span id";
  if (span.name.length > 1_024) return "a span name longer than 1024 characters";
  return "";
}

/** A span as stored, from OTLP or from Kiln's own runs: its generation, tool call and session mapped. */
export function storedSpan(
  s: Omit<
    SpanDoc,
    | "_id"
    | "attributes"
    | "resourceAttributes"
    | "events"
    | "sessionId"
    | "userId"
    | "generation"
    | "toolCall"
    | "unmappedAttributes"
    | "unmappedAttributesTruncated"
  > & {
    attributes: Record<string, JsonValue>;
    resourceAttributes: Record<string, JsonValue>;
    events: SpanEvent[];
  },
  models: ModelCatalog,
): SpanDoc {
  return {
    ...s,
    _id: `${s.organizationId}:${s.traceId}:${s.spanId}`,
    attributes: encodeJson(s.attributes),
    resourceAttributes: encodeJson(s.resourceAttributes),
    events: encodeJson(s.events),
    sessionId: sessionOf(s.attributes),
    userId: userOf(s.attributes),
    generation: generationOf(s.attributes, s.events, models),
    toolCall: toolCallOfSpan(s.attributes),
    ...unmappedAttributesOf(s.attributes),
  };
}

function spanDoc(
  organizationId: string,
  span: Span,
  resource: Record<string, JsonValue>,
  scopeName: string,
  models: ModelCatalog,
): SpanDoc {
  return storedSpan(
    {
      organizationId,
      traceId: hexOf(span.traceId),
      spanId: hexOf(span.spanId),
      parentSpanId: span.parentSpanId.length > 0 ? hexOf(span.parentSpanId) : "",
      name: span.name,
      kind: KINDS[span.kind] ?? "unspecified",
      startTime: dateOfNanos(span.startTimeUnixNano),
      endTime: dateOfNanos(span.endTimeUnixNano),
      status: STATUSES[span.status?.code ?? Status_StatusCode.UNSET] ?? "unset",
      statusMessage: span.status?.message ?? "",
      attributes: attributesToJson(span.attributes),
      resourceAttributes: resource,
      events: span.events.map((e) => ({
        name: e.name,
        time: dateOfNanos(e.timeUnixNano).toISOString(),
        attributes: attributesToJson(e.attributes),
      })),
      scopeName,
    },
    models,
  );
}

/**
 * The resource spans cut into pieces of at most `size` spans each (a resource's and a scope's spans
 * keep their resource and scope), in order: a large export is mapped and stored piece by piece.
 */
export function* spanChunks(resourceSpans: readonly ResourceSpans[], size: number): Generator<ResourceSpans[]> {
  let piece: ResourceSpans[] = [];
  let count = 0;
  for (const rs of resourceSpans) {
    for (const ss of rs.scopeSpans) {
      for (let at = 0; at < ss.spans.length; ) {
        const spans = ss.spans.slice(at, at + size - count);
        piece.push({ ...rs, scopeSpans: [{ ...ss, spans }] });
        count += spans.length;
        at += spans.length;
        if (count === size) {
          yield piece;
          piece = [];
          count = 0;
        }
      }
    }
  }
  if (piece.length > 0) yield piece;
}

/** The spans to store and how many were refused (with the first reason). */
export function spansOf(
  organizationId: string,
  resourceSpans: readonly ResourceSpans[],
  models: ModelCatalog,
): { docs: SpanDoc[]; rejected: number; reason: string } {
  const docs: SpanDoc[] = [];
  let rejected = 0;
  let reason = "";
  for (const rs of resourceSpans) {
    const resource = attributesToJson(rs.resource?.attributes ?? []);
    for (const ss of rs.scopeSpans) {
      for (const span of ss.spans) {
        const issue = spanIssue(span);
        if (issue) {
          rejected++;
          reason ||= issue;
          continue;
        }
        docs.push(spanDoc(organizationId, span, resource, ss.scope?.name ?? "", models));
      }
    }
  }
  return { docs, rejected, reason };
}
