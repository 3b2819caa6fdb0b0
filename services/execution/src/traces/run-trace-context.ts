/**
 * The W3C trace context of a run (docs/observability.md "Kiln's runs as traces"): a caller's
 * `traceparent` makes the run's spans join its trace under its span; without one the run starts
 * a trace of its own. The run's root span id is new either way, and answered as `traceparent`.
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
  const bytes = randomBytes(valid ? 8 : 24).toString("hex");
  return valid
    ? { traceId: m[1] as string, spanId: bytes, parentSpanId: m[2] as string }
    : { traceId: bytes.slice(0, 32), spanId: bytes.slice(32), parentSpanId: "" };
}

/** The `traceparent` of the run's root span (sampled). */
export const traceparentOf = (t: RunTraceContext): string => `00-${t.traceId}-${t.spanId}-01`;

/**
 * The span of a step of a run: derived from the run's root span and the step's id (an agent's
 * steps are unique), so the step's child run, stored before the agent run, can name it as parent.
 */
export const stepSpanIdOf = (t: RunTraceContext, stepId: string): string =>
  createHash("sha256").update(`${t.spanId}/${stepId}`).digest("hex").slice(0, 16);

/** The trace context of an agent step's child run: the agent's trace, under the step's span. */
export const childTraceOf = (t: RunTraceContext, stepId: string): RunTraceContext => ({
  traceId: t.traceId,
  spanId: randomBytes(8).toString("hex"),
  parentSpanId: stepSpanIdOf(t, stepId),
});
