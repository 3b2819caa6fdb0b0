import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { withPrincipal } from "@kiln/kit/principal";
import { TraceService } from "@kiln/proto/traces";
import type { GenerationDoc, ToolCallDoc } from "./genai-mapping.js";
import { type TraceRetention, traceSettingsRpc } from "./trace-retention-rpc.js";
import type { SessionDoc, SpanDoc, TraceDoc } from "./trace-store.js";
import type { Traces } from "./traces.js";

const jsonText = (json: string | null | undefined) => (json == null ? undefined : { json });
const optional = (n: number | null | undefined) => n ?? undefined;
const bigOptional = (n: number | null | undefined) => (n == null ? undefined : BigInt(n));

const generationToProto = (g: GenerationDoc) => ({
  operation: g.operation,
  requestModel: g.requestModel,
  responseModel: g.responseModel,
  provider: g.provider,
  inputTokens: bigOptional(g.inputTokens),
  outputTokens: bigOptional(g.outputTokens),
  costUsd: optional(g.costUsd),
  inputMessages: jsonText(g.inputMessages),
  outputMessages: jsonText(g.outputMessages),
  systemInstructions: jsonText(g.systemInstructions),
  toolCalls: jsonText(g.toolCalls),
  toolDefinitions: jsonText(g.toolDefinitions),
  parameters: jsonText(g.parameters),
  responseId: g.responseId ?? "",
  finishReasons: g.finishReasons ?? [],
  errorType: g.errorType ?? "",
  cacheReadInputTokens: bigOptional(g.cacheReadInputTokens),
  cacheCreationInputTokens: bigOptional(g.cacheCreationInputTokens),
  reasoningTokens: bigOptional(g.reasoningTokens),
  timeToFirstChunkMs: optional(g.timeToFirstChunkMs),
});

const toolCallToProto = (t: ToolCallDoc) => ({
  id: t.id,
  name: t.name,
  type: t.type,
  arguments: jsonText(t.arguments),
  result: jsonText(t.result),
});

export const traceToProto = (t: TraceDoc) => ({
  traceId: t.traceId,
  organizationId: t.organizationId,
  name: t.name,
  sessionId: t.sessionId,
  status: t.status,
  startTime: timestampFromDate(t.startTime),
  endTime: timestampFromDate(t.endTime),
  spanCount: t.spanCount,
  models: t.models,
  inputTokens: bigOptional(t.inputTokens),
  outputTokens: bigOptional(t.outputTokens),
  costUsd: optional(t.costUsd),
  userId: t.userId ?? "",
  runId: t.runId ?? "",
  label: t.label ?? "",
});

const sessionToProto = (s: SessionDoc) => ({
  sessionId: s.sessionId,
  organizationId: s.organizationId,
  traceCount: s.traceCount,
  firstTime: timestampFromDate(s.firstTime),
  lastTime: timestampFromDate(s.lastTime),
  inputTokens: bigOptional(s.inputTokens),
  outputTokens: bigOptional(s.outputTokens),
  costUsd: optional(s.costUsd),
  userId: s.userId,
});

const anyJson = (v: unknown) => (v === null ? undefined : { json: JSON.stringify(v) });

export const spanToProto = (s: SpanDoc) => ({
  traceId: s.traceId,
  spanId: s.spanId,
  parentSpanId: s.parentSpanId,
  name: s.name,
  kind: s.kind,
  startTime: timestampFromDate(s.startTime),
  endTime: timestampFromDate(s.endTime),
  status: s.status,
  statusMessage: s.statusMessage,
  attributes: { json: s.attributes },
  resourceAttributes: { json: s.resourceAttributes },
  events: { json: s.events },
  scopeName: s.scopeName,
  generation: s.generation ? generationToProto(s.generation) : undefined,
  toolCall: s.toolCall ? toolCallToProto(s.toolCall) : undefined,
  logEvents: jsonText(s.logEvents),
  unmappedAttributes: s.unmappedAttributes ?? [],
  unmappedAttributesTruncated: s.unmappedAttributesTruncated ?? false,
  continuedByRunId: s.continuedByRunId ?? "",
});

/** The TraceService, hosted by the execution process (docs/observability.md). */
export function registerTraceRpc(router: ConnectRouter, traces: Traces, retention: TraceRetention): void {
  router.service(TraceService, {
    ingestSpans: withPrincipal(async (p, req) => {
      const input =
        req.otlpContentType !== ""
          ? { body: req.otlpBody, contentType: req.otlpContentType }
          : { resourceSpans: req.resourceSpans };
      const r = await traces.ingest(p, req.organizationId, input);
      return { rejectedSpans: BigInt(r.rejected), errorMessage: r.reason };
    }),
    ingestLogs: withPrincipal(async (p, req) => {
      const r = await traces.ingestLogs(p, req.organizationId, {
        body: req.otlpBody,
        contentType: req.otlpContentType,
      });
      return { rejectedLogRecords: BigInt(r.rejected), errorMessage: r.reason };
    }),
    listTraces: withPrincipal(async (p, req) => {
      const page = await traces.list(p, {
        organizationId: req.organizationId,
        limit: req.limit,
        cursor: req.cursor,
        name: req.name,
        sessionId: req.sessionId,
        model: req.model,
        status: req.status,
        userId: req.userId,
        label: req.label,
        from: req.from ? timestampDate(req.from) : undefined,
        to: req.to ? timestampDate(req.to) : undefined,
        minCostUsd: req.minCostUsd,
        maxCostUsd: req.maxCostUsd,
      });
      return { traces: page.items.map(traceToProto), nextCursor: page.nextCursor };
    }),
    listSessions: withPrincipal(async (p, req) => {
      const page = await traces.listSessions(p, req);
      return { sessions: page.items.map(sessionToProto), nextCursor: page.nextCursor };
    }),
    getSession: withPrincipal(async (p, req) => {
      const r = await traces.getSession(p, req);
      return {
        session: sessionToProto(r.session),
        traces: r.traces.map((t) => ({
          trace: traceToProto(t.trace),
          input: anyJson(t.input),
          output: anyJson(t.output),
        })),
        nextCursor: r.nextCursor,
      };
    }),
    getTrace: withPrincipal(async (p, req) => {
      const r = await traces.get(p, req.organizationId, req.traceId);
      return { trace: traceToProto(r.trace), spans: r.spans.map(spanToProto) };
    }),
    ...traceSettingsRpc(retention),
  });
}
