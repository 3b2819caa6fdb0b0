/**
 * The W3C trace context of a run (docs/observability.md "Kiln's runs as traces"): a caller's
 * `traceparent` makes the run's spans join its trace under its span; without one the run starts
 * a trace of its own. The run's root span id is new either way, and answered as `traceparent`.
 * In a trace of its own it derives from the trace id (`ownTraceOf`): such a run is stored as its
 * trace's summary only, and its spans are built again from the run when the trace is read.
 */
import { createHash, randomBytes } from "node:crypto";

export interface RunTraceContext {
  traceId: string;
  /** The run's root span. */
  spanId: string;
  /** The caller's span, "" when the run started the trace. */
  parentSpanId: string;
}

export const TRACEPARENT_HEADER = "traceparent";
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const ZEROS = /^0+$/;

/** A new trace context for a run, under the caller's `traceparent` when it is a valid one. */
export function runTraceContextOf(traceparent: string | null | undefined): RunTraceContext {
  const m = TRACEPARENT.exec(traceparent?.trim().toLowerCase() ?? "");
  const valid = m && !traceparent?.startsWith("ff") && !ZEROS.test(m[1] as string) && !ZEROS.test(m[2] as string);
  if (valid) return { traceId: m[1] as string, spanId: randomBytes(8).toString("hex"), parentSpanId: m[2] as string };
  return ownTraceOf(newTraceId());
}

/**
 * A trace id Kiln starts: the time in milliseconds, then 80 random bits (W3C trace context level
 * 2 asks randomness of the last 7 bytes only). In time order, a trace's summary lands at the end of
 * the store's trace index instead of a random page of it, as the traces' `_id`s do.
 */
const newTraceId = (): string => Date.now().toString(16).padStart(12, "0") + randomBytes(10).toString("hex");

/** A span id from a digest: 16 hex digits, never all zeros (invalid in W3C trace context). */
const spanIdOf = (text: string): string => {
  const id = createHash("sha256").update(text).digest("hex").slice(0, 16);
  return ZEROS.test(id) ? "0000000000000001" : id;
};

/** The trace context of a run that started trace `traceId`: its root span derives from the trace id. */
export const ownTraceOf = (traceId: string): RunTraceContext => ({
  traceId,
  spanId: spanIdOf(`${traceId}/root`),
  parentSpanId: "",
});

/** The n-th span below a run's root span (its provider and tool calls, a step without an id). */
export const childSpanIdOf = (t: RunTraceContext, n: number): string => spanIdOf(`${t.spanId}#${n}`);

/** The `traceparent` of the run's root span (sampled). */
export const traceparentOf = (t: RunTraceContext): string => `00-${t.traceId}-${t.spanId}-01`;

/**
 * The span of a step of a run: derived from the run's root span and the step's id (an agent's
 * steps are unique), so the step's child run, stored before the agent run, can name it as parent.
 */
export const stepSpanIdOf = (t: RunTraceContext, stepId: string): string => spanIdOf(`${t.spanId}/${stepId}`);

/** The trace context of an agent step's child run: the agent's trace, under the step's span. */
export const childTraceOf = (t: RunTraceContext, stepId: string): RunTraceContext => ({
  traceId: t.traceId,
  spanId: randomBytes(8).toString("hex"),
  parentSpanId: stepSpanIdOf(t, stepId),
});
