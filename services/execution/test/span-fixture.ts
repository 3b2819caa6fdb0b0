import type { SpanDoc } from "../src/traces/trace-store.js";

/**
 * Span `i` (1 and up) of a trace as stored: span 1 is the root, the others its children; it starts
 * `i` ms after `t0` and lasts `durationMs`. `more` replaces any field (expiry included).
 */
export function spanFixture(
  organizationId: string,
  traceId: string,
  i: number,
  options: { t0: number; durationMs?: number },
  more: Partial<SpanDoc> = {},
): SpanDoc {
  const spanId = i.toString(16).padStart(16, "0");
  return {
    _id: `${organizationId}:${traceId}:${spanId}`,
    organizationId,
    traceId,
    spanId,
    parentSpanId: i === 1 ? "" : "0000000000000001",
    name: `span ${i}`,
    kind: "internal",
    startTime: new Date(options.t0 + i),
    endTime: new Date(options.t0 + i + (options.durationMs ?? 1)),
    status: "ok",
    statusMessage: "",
    attributes: "{}",
    resourceAttributes: "{}",
    events: "[]",
    scopeName: "test",
    sessionId: "",
    generation: null,
    ...more,
  };
}
