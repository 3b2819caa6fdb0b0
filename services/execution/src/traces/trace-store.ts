import type { Collection, Store } from "@kiln/kit/store";
import type { GenerationDoc, ToolCallDoc } from "./genai-mapping.js";

/** One span; `_id` is organization, trace and span id, so a span sent again replaces itself. */
export interface SpanDoc {
  _id: string;
  organizationId: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: string;
  startTime: Date;
  endTime: Date;
  status: "unset" | "ok" | "error";
  statusMessage: string;
  /** JSON text (`encodeJson`): attribute keys hold dots, which document stores cannot keep as keys. */
  attributes: string;
  resourceAttributes: string;
  events: string;
  scopeName: string;
  sessionId: string;
  /** The end user the span served (user.id, ...); absent on spans stored before it was mapped. */
  userId?: string;
  generation: GenerationDoc | null;
  /** Set when the span executes a tool (absent on spans stored before tool calls were mapped). */
  toolCall?: ToolCallDoc | null;
  /** JSON text of the GenAI events joined from OTLP log records (log-events.ts); absent when none. */
  logEvents?: string;
  /** The attribute keys the mapping did not read, at most 64 (span-mapping.ts); absent on spans stored before. */
  unmappedAttributes?: string[];
  /** More keys were unmapped than `unmappedAttributes` holds. */
  unmappedAttributesTruncated?: boolean;
  /** Set when read, never stored: the Kiln run this caller's span called (trace-summary.ts `continuedByRun`). */
  continuedByRunId?: string;
  /** When the sweep (and MongoDB's TTL) deletes it: the organization's retention at ingestion (trace-retention.ts). */
  expiresAt?: Date;
  /** `expiresAt`'s UTC day (YYYY-MM-DD): what the sweep finds expired documents by, in every store. */
  expiresDay?: string;
}

/** A trace's summary, rebuilt from its spans at every ingestion that touches it. */
export interface TraceDoc {
  /** A time-ordered id (`@kiln/kit/ids`): the list's order and cursor. */
  _id: string;
  organizationId: string;
  traceId: string;
  name: string;
  sessionId: string;
  status: "unset" | "ok" | "error";
  startTime: Date;
  endTime: Date;
  spanCount: number;
  models: string[];
  inputTokens: number | null;
  outputTokens: number | null;
  costUsd: number | null;
  /** The first span's end user ("" when none says); absent on summaries built before. */
  userId?: string;
  /** When the trace is a Kiln run: its run id and label (`kiln.run.id`, `kiln.run.label`), else "". */
  runId?: string;
  label?: string;
  generationCount?: number;
  /** The latest of its spans' `expiresAt`, and its day. */
  expiresAt?: Date;
  expiresDay?: string;
}

/** A session: the traces sharing a `sessionId`, rebuilt from their summaries whenever one of them changes. */
export interface SessionDoc {
  /** `sessionDocId(organizationId, sessionId)`, so a rebuild replaces it. */
  _id: string;
  organizationId: string;
  sessionId: string;
  traceCount: number;
  firstTime: Date;
  lastTime: Date;
  inputTokens: number | null;
  outputTokens: number | null;
  /** null as soon as one of its model calls is unpriced (never a partial sum). */
  costUsd: number | null;
  userId: string;
  /** The latest of its traces' `expiresAt`, and its day: a session goes with its last trace. */
  expiresAt?: Date;
  expiresDay?: string;
}

/** GenAI log events waiting for their span (log-joins.ts); `_id` is the span's. */
export interface PendingLogsDoc {
  _id: string;
  organizationId: string;
  traceId: string;
  spanId: string;
  /** JSON text of the events (log-events.ts `LogEvent[]`). */
  logEvents: string;
  expiresAt: Date;
  expiresDay: string;
}

export interface TraceCollections {
  spans: Collection<SpanDoc>;
  traces: Collection<TraceDoc>;
  sessions: Collection<SessionDoc>;
  pendingLogs: Collection<PendingLogsDoc>;
}

export const traceCollections = (store: Store): TraceCollections => ({
  spans: store.collection("trace_spans"),
  traces: store.collection("traces"),
  sessions: store.collection("trace_sessions"),
  pendingLogs: store.collection("trace_pending_logs"),
});

export async function ensureTraceIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("trace_spans", [{ keys: { organizationId: 1, traceId: 1, startTime: 1 } }]);
  await store.ensureIndexes("traces", [
    { keys: { organizationId: 1, traceId: 1 }, unique: true },
    { keys: { organizationId: 1, _id: -1 } },
    { keys: { organizationId: 1, startTime: -1 } },
    // The list's filters that narrow the most, each newest first; sessions in time order.
    { keys: { organizationId: 1, sessionId: 1, startTime: 1 } },
    { keys: { organizationId: 1, userId: 1, _id: -1 } },
    { keys: { organizationId: 1, label: 1, _id: -1 } },
    { keys: { organizationId: 1, costUsd: 1 } },
  ]);
  await store.ensureIndexes("trace_pending_logs", [{ keys: { organizationId: 1 } }]);
  await store.ensureIndexes("trace_sessions", [
    { keys: { organizationId: 1, sessionId: 1 }, unique: true },
    { keys: { organizationId: 1, lastTime: -1, _id: -1 } },
  ]);
}
