/**
 * Ingested OpenTelemetry traces (docs/observability.md): spans stored as they came with their
 * GenAI mapping, and one summary per trace. Writes need `traces:write`, reads `traces:read`
 * (API keys); every read and write is scoped by organization.
 */
import type { IdentityAuth } from "@kiln/kit/authorizer";
import { invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import type { Filter } from "@kiln/kit/store";
import type { ResourceSpans } from "@kiln/proto/otlp/trace";
import type { ModelCatalog } from "../domain/model-catalog.js";
import { spansOf } from "./span-mapping.js";
import type { TraceRetention } from "./trace-retention.js";
import type { SpanDoc, TraceCollections, TraceDoc } from "./trace-store.js";

export const TRACE_SCOPES = { read: "traces:read", write: "traces:write" } as const;

export interface TraceFilter {
  name?: string;
  sessionId?: string;
  model?: string;
  status?: string;
  from?: Date;
  to?: Date;
}

const sum = (values: (number | null)[]): number | null =>
  values.some((v) => v !== null) ? values.reduce<number>((a, v) => a + (v ?? 0), 0) : null;

/** A summary expires with its last span (spans stored before retention have no `expiresAt`). */
function expiresAtOf(spans: SpanDoc[]): { expiresAt?: Date } {
  const times = spans.flatMap((s) => (s.expiresAt ? [s.expiresAt.getTime()] : []));
  return times.length > 0 ? { expiresAt: new Date(Math.max(...times)) } : {};
}

/** The summary of a trace from all its spans (`spans` ordered by start time). */
export function summaryOf(spans: SpanDoc[]): Omit<TraceDoc, "_id"> {
  const first = spans[0] as SpanDoc;
  const ids = new Set(spans.map((s) => s.spanId));
  const root = spans.find((s) => s.parentSpanId === "" || !ids.has(s.parentSpanId)) ?? first;
  const generations = spans.flatMap((s) => (s.generation ? [s.generation] : []));
  const costs = generations.map((g) => g.costUsd);
  return {
    organizationId: first.organizationId,
    traceId: first.traceId,
    name: root.name,
    sessionId: spans.find((s) => s.sessionId !== "")?.sessionId ?? "",
    status: spans.some((s) => s.status === "error") ? "error" : root.status,
    startTime: new Date(Math.min(...spans.map((s) => s.startTime.getTime()))),
    endTime: new Date(Math.max(...spans.map((s) => s.endTime.getTime()))),
    spanCount: spans.length,
    models: [...new Set(generations.map((g) => g.responseModel || g.requestModel).filter((m) => m !== ""))],
    inputTokens: sum(generations.map((g) => g.inputTokens)),
    outputTokens: sum(generations.map((g) => g.outputTokens)),
    // Unknown as soon as one generation is unpriced: a partial sum would read as the whole cost.
    costUsd: costs.length > 0 && costs.every((c) => c !== null) ? sum(costs) : null,
    ...expiresAtOf(spans),
  };
}

async function summarize({ spans, traces }: TraceCollections, organizationId: string, traceId: string): Promise<void> {
  const all = await spans.find({ organizationId, traceId }, { sort: { startTime: 1 } });
  if (all.length === 0) return;
  await traces.updateOne(
    { organizationId, traceId },
    { $set: summaryOf(all), $setOnInsert: { _id: newId("trc") } },
    { upsert: true },
  );
}

/** Stores spans of one organization (a span sent again replaces itself), then the summaries of their traces. */
export async function storeSpanDocs(collections: TraceCollections, organizationId: string, docs: SpanDoc[]) {
  await Promise.all(docs.map((d) => collections.spans.replaceOne({ _id: d._id }, d, { upsert: true })));
  for (const traceId of new Set(docs.map((d) => d.traceId))) await summarize(collections, organizationId, traceId);
}

export type Traces = ReturnType<typeof createTraces>;

export function createTraces(deps: {
  collections: TraceCollections;
  identityAuth: IdentityAuth;
  models: ModelCatalog;
  retention: TraceRetention;
}) {
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
      const { docs, rejected, reason } = spansOf(organizationId, resourceSpans, deps.models);
      const expiresAt = await deps.retention.expiresAt(organizationId);
      await storeSpanDocs(
        deps.collections,
        organizationId,
        docs.map((d) => ({ ...d, expiresAt })),
      );
      return { rejected, reason };
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
