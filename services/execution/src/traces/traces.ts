/**
 * Ingested OpenTelemetry traces (docs/observability.md): spans stored as they came with their
 * GenAI mapping, one summary per trace, one per session. Writes need `traces:write`, reads
 * `traces:read` (API keys); every read and write is scoped by organization.
 */
import type { IdentityAuth } from "@kiln/kit/authorizer";
import type { EventOutbox } from "@kiln/kit/bus/outbox";
import { invalidArgument, notFound } from "@kiln/kit/errors";
import { findPage, findPageByTime } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import type { Collection, Filter } from "@kiln/kit/store";
import type { ModelCatalog } from "@kiln/models/catalog";
import type { ResourceSpans } from "@kiln/proto/otlp/trace";
import type { RunDoc } from "../store/run-store.js";
import { createIngestLimiter, type IngestLimiterOptions } from "./ingest-limiter.js";
import { logEventsOf } from "./log-events.js";
import { keepingLogEvents, storeLogEvents, withPendingLogs } from "./log-joins.js";
import { decodeOtlpLogs, decodeOtlpTraces } from "./otlp-decode.js";
import { runSpansFor, spansOfTrace } from "./run-trace-reads.js";
import { spanChunks, spansOf } from "./span-mapping.js";
import { timedCollections } from "./store-time.js";
import { ingestedEvents } from "./trace-events.js";
import { exchangeOf } from "./trace-exchange.js";
import { expiryOf, type TraceRetention } from "./trace-retention.js";
import type { TraceCollections } from "./trace-store.js";
import { continuedByRun } from "./trace-summary.js";
import { storeSpanDocs } from "./trace-writes.js";

export { summaryOf } from "./trace-summary.js";
export { storeSpanDocs } from "./trace-writes.js";

export const TRACE_SCOPES = { read: "traces:read", write: "traces:write" } as const;

/** Spans mapped and stored at once by an ingestion (about 150 ms of the embedded process's time). */
const INGEST_PIECE_SPANS = 500;

export interface TraceFilter {
  name?: string;
  sessionId?: string;
  userId?: string;
  model?: string;
  status?: string;
  label?: string;
  from?: Date;
  to?: Date;
  minCostUsd?: number;
  maxCostUsd?: number;
}

type Page = { limit: number; cursor: string };

const range = (low: unknown, high: unknown, bounds: [string, string]) => ({
  ...(low !== undefined && { [bounds[0]]: low }),
  ...(high !== undefined && { [bounds[1]]: high }),
});

/** The store's filter for the list's filters; an empty range or a negative cost is refused. */
export function traceFilterOf(organizationId: string, f: TraceFilter): Filter {
  const issue = (field: string, text: string) => invalidArgument(`invalid ${field}`, [{ field, issue: text }]);
  for (const [field, v] of [
    ["minCost", f.minCostUsd],
    ["maxCost", f.maxCostUsd],
  ] as const) {
    if (v !== undefined && !(Number.isFinite(v) && v >= 0))
      throw issue(field, "must be a number of US dollars, 0 or more");
  }
  if (f.minCostUsd !== undefined && f.maxCostUsd !== undefined && f.minCostUsd > f.maxCostUsd)
    throw issue("maxCost", "must not be less than minCost");
  if (f.from && f.to && f.from >= f.to) throw issue("to", "must be after from");
  const filter: Filter = { organizationId };
  if (f.name) filter.name = f.name;
  if (f.sessionId) filter.sessionId = f.sessionId;
  if (f.userId) filter.userId = f.userId;
  if (f.model) filter.models = f.model;
  if (f.status) filter.status = f.status;
  if (f.label) filter.label = f.label;
  if (f.from || f.to) filter.startTime = range(f.from, f.to, ["$gte", "$lt"]);
  // A trace with an unpriced model call has no cost: a cost range leaves it out.
  if (f.minCostUsd !== undefined || f.maxCostUsd !== undefined)
    filter.costUsd = range(f.minCostUsd, f.maxCostUsd, ["$gte", "$lte"]);
  return filter;
}

export type Traces = ReturnType<typeof createTraces>;

/** What an ingestion stores: decoded resource spans, or an OTLP/HTTP body as it came. */
export type IngestInput = { resourceSpans: readonly ResourceSpans[] } | { body: Uint8Array; contentType: string };

export function createTraces(deps: {
  collections: TraceCollections;
  /** The runs whose traces are stored as their summary only: their spans are built from them when read. */
  runs: Collection<RunDoc>;
  identityAuth: IdentityAuth;
  models: ModelCatalog;
  /** Where trace.ingested leaves from (online evaluation scores generations off the ingestion's path). */
  events?: EventOutbox;
  retention: TraceRetention;
  /** The bound on ingestion beside the run path (ingest-limiter.ts). */
  ingest?: IngestLimiterOptions;
  /**
   * The store is another process (the distributed mode): the time ingestion waits on it is the
   * store's, which the bound leaves out while no run is stored (on SQLite in this process, store
   * time is this process's).
   */
  storeElsewhere?: boolean;
}) {
  const limit = createIngestLimiter(deps.ingest);
  const runSpans = runSpansFor(deps);
  const keepLogEvents = keepingLogEvents(deps.models);
  const { spans, traces, sessions } = deps.collections;
  const authorize = (principal: Principal, organizationId: string, scope: string) => {
    if (organizationId === "")
      throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
    return deps.identityAuth.authorize(principal, { organizationId, scope, requireAi: false });
  };

  return {
    /**
     * Stores the spans (a span sent again replaces itself), then the summaries of their traces. An
     * OTLP/HTTP body is decoded inside the bound, with the rest of the ingestion's work.
     */
    async ingest(principal: Principal, organizationId: string, input: IngestInput) {
      await authorize(principal, organizationId, TRACE_SCOPES.write);
      return limit(organizationId, async (turn) => {
        const resourceSpans = "body" in input ? decodeOtlpTraces(input.body, input.contentType) : input.resourceSpans;
        const expiry = expiryOf(await deps.retention.expiresAt(organizationId));
        const collections = deps.storeElsewhere
          ? timedCollections(deps.collections, turn.waitedElsewhere)
          : deps.collections;
        let rejected = 0;
        let reason = "";
        // Piece by piece, the process given up between two (to the run path, and to the other
        // organizations' ingestions): a 10,000-span export never holds it for more than one piece.
        let first = true;
        for (const piece of spanChunks(resourceSpans, INGEST_PIECE_SPANS)) {
          if (!first) await turn.next();
          first = false;
          const mapped = spansOf(organizationId, piece, deps.models);
          rejected += mapped.rejected;
          reason ||= mapped.reason;
          // GenAI log events sent before their span join it now (log-joins.ts).
          const pending = await withPendingLogs(
            collections,
            organizationId,
            mapped.docs.map((d) => ({ ...d, ...expiry })),
            deps.models,
          );
          const stored = pending.docs;
          // Spans joining a run's trace stored as its summary only: the run's spans are stored with them.
          await storeSpanDocs(collections, organizationId, stored, runSpans, keepLogEvents);
          await pending.joined();
          await deps.events?.add(ingestedEvents(organizationId, stored, new Date()));
        }
        return { rejected, reason };
      });
    },

    /**
     * Stores the GenAI events of an OTLP/HTTP logs export (docs/observability.md "Logs"): joined to
     * their spans, or kept until their span arrives; decoded inside the same bound as spans.
     */
    async ingestLogs(principal: Principal, organizationId: string, input: { body: Uint8Array; contentType: string }) {
      await authorize(principal, organizationId, TRACE_SCOPES.write);
      return limit(organizationId, async (turn) => {
        const logs = logEventsOf(decodeOtlpLogs(input.body, input.contentType));
        const collections = deps.storeElsewhere
          ? timedCollections(deps.collections, turn.waitedElsewhere)
          : deps.collections;
        const stored = await storeLogEvents(collections, organizationId, logs.bySpan, deps.models, runSpans);
        return { rejected: logs.rejected + stored.rejected, reason: logs.reason || stored.reason };
      });
    },

    async list(principal: Principal, input: { organizationId: string } & Page & TraceFilter) {
      await authorize(principal, input.organizationId, TRACE_SCOPES.read);
      return findPage(traces, traceFilterOf(input.organizationId, input), input);
    },

    async get(principal: Principal, organizationId: string, traceId: string) {
      await authorize(principal, organizationId, TRACE_SCOPES.read);
      const trace = await traces.findOne({ organizationId, traceId });
      if (!trace) throw notFound("trace");
      const spans = await spansOfTrace(deps, trace);
      const continued = continuedByRun(spans);
      return { trace, spans: spans.map((s) => ({ ...s, continuedByRunId: continued.get(s.spanId) ?? "" })) };
    },

    /** The organization's sessions, latest activity first. */
    async listSessions(principal: Principal, input: { organizationId: string; userId: string } & Page) {
      await authorize(principal, input.organizationId, TRACE_SCOPES.read);
      const filter: Filter = { organizationId: input.organizationId };
      if (input.userId) filter.userId = input.userId;
      return findPageByTime(sessions, filter, { field: "lastTime", direction: -1 }, input);
    },

    /** A session and a page of its traces in start order, each with what it was asked and answered. */
    async getSession(principal: Principal, input: { organizationId: string; sessionId: string } & Page) {
      const { organizationId, sessionId } = input;
      await authorize(principal, organizationId, TRACE_SCOPES.read);
      const session = await sessions.findOne({ organizationId, sessionId });
      if (!session) throw notFound("session");
      const page = await findPageByTime(
        traces,
        { organizationId, sessionId },
        { field: "startTime", direction: 1 },
        input,
      );
      const traceIds = page.items.map((t) => t.traceId);
      const all = await spans.find(
        { organizationId, traceId: { $in: traceIds } },
        { sort: { startTime: 1 }, projection: { resourceAttributes: 0, events: 0 } },
      );
      return {
        session,
        traces: page.items.map((trace) => ({ trace, ...exchangeOf(all.filter((s) => s.traceId === trace.traceId)) })),
        nextCursor: page.nextCursor,
      };
    },
  };
}
