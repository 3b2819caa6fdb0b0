/**
 * Ingested OpenTelemetry traces (docs/observability.md): spans stored as they came with their
 * GenAI mapping, and one summary per trace. Writes need `traces:write`, reads `traces:read`
 * (API keys); every read and write is scoped by organization.
 */
import type { IdentityAuth } from "@kiln/kit/authorizer";
import { invalidArgument, notFound } from "@kiln/kit/errors";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import type { Filter } from "@kiln/kit/store";
import type { ResourceSpans } from "@kiln/proto/otlp/trace";
import type { ModelCatalog } from "../domain/model-catalog.js";
import { createIngestLimiter } from "./ingest-limiter.js";
import { spansOf } from "./span-mapping.js";
import { expiryOf, type TraceRetention } from "./trace-retention.js";
import type { TraceCollections } from "./trace-store.js";
import { storeSpanDocs } from "./trace-writes.js";

export { storeSpanDocs, summaryOf } from "./trace-writes.js";

export const TRACE_SCOPES = { read: "traces:read", write: "traces:write" } as const;

export interface TraceFilter {
  name?: string;
  sessionId?: string;
  model?: string;
  status?: string;
  from?: Date;
  to?: Date;
}

export type Traces = ReturnType<typeof createTraces>;

export function createTraces(deps: {
  collections: TraceCollections;
  identityAuth: IdentityAuth;
  models: ModelCatalog;
  retention: TraceRetention;
  /** The share of the process's time ingestion may hold (ingest-limiter.ts). */
  ingestShare?: number;
}) {
  const limit = createIngestLimiter({ share: deps.ingestShare });
  const { spans, traces } = deps.collections;
  const authorize = (principal: Principal, organizationId: string, scope: string) => {
    if (organizationId === "")
      throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
    return deps.identityAuth.authorize(principal, { organizationId, scope, requireAi: false });
  };

  return {
    /** Stores the spans (a span sent again replaces itself), then the summaries of their traces. */
    async ingest(principal: Principal, organizationId: string, resourceSpans: readonly ResourceSpans[]) {
      await authorize(principal, organizationId, TRACE_SCOPES.write);
      return limit(async () => {
        const { docs, rejected, reason } = spansOf(organizationId, resourceSpans, deps.models);
        const expiresAt = await deps.retention.expiresAt(organizationId);
        await storeSpanDocs(
          deps.collections,
          organizationId,
          docs.map((d) => ({ ...d, ...expiryOf(expiresAt) })),
        );
        return { rejected, reason };
      });
    },

    async list(principal: Principal, input: { organizationId: string; limit: number; cursor: string } & TraceFilter) {
      await authorize(principal, input.organizationId, TRACE_SCOPES.read);
      const filter: Filter = { organizationId: input.organizationId };
      if (input.name) filter.name = input.name;
      if (input.sessionId) filter.sessionId = input.sessionId;
      if (input.model) filter.models = input.model;
      if (input.status) filter.status = input.status;
      if (input.from || input.to)
        filter.startTime = { ...(input.from && { $gte: input.from }), ...(input.to && { $lt: input.to }) };
      return findPage(traces, filter, input);
    },

    async get(principal: Principal, organizationId: string, traceId: string) {
      await authorize(principal, organizationId, TRACE_SCOPES.read);
      const trace = await traces.findOne({ organizationId, traceId });
      if (!trace) throw notFound("trace");
      return { trace, spans: await spans.find({ organizationId, traceId }, { sort: { startTime: 1 } }) };
    },
  };
}
