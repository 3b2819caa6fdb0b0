import type { JsonText } from "@kiln/proto/common";
import type { Generation, GetSessionResponse, Session, Span, ToolCall, Trace } from "@kiln/proto/traces";
import Type from "typebox";
import { Nullable, OneOf, ref, Timestamp } from "../schemas.js";
import { answersOf, iso } from "./views.js";

/** Trace, span and generation views (docs/observability.md) and their conversions from the execution service's messages. */

const STATUSES = ["unset", "ok", "error"] as const;
type Status = (typeof STATUSES)[number];
export const TraceStatus = OneOf(STATUSES);
const Json = Type.Unknown({ description: "JSON, as the span carried it" });
const Messages = Nullable(Type.Array(Json), { description: "null when the span carried none" });
const Tokens = Nullable(Type.Integer({ minimum: 0 }), { description: "null when not reported" });
const Cost = Nullable(Type.Number(), { description: "USD at Kiln's price table; null when unpriced (never 0)" });

export const GenerationView = Type.Object(
  {
    operation: Nullable(Type.String({ description: "gen_ai.operation.name" })),
    requestModel: Nullable(Type.String({ description: "gen_ai.request.model" })),
    responseModel: Nullable(Type.String({ description: "gen_ai.response.model" })),
    provider: Nullable(Type.String({ description: "gen_ai.provider.name, else gen_ai.system" })),
    inputTokens: Tokens,
    outputTokens: Tokens,
    costUsd: Cost,
    inputMessages: Messages,
    outputMessages: Messages,
    systemInstructions: Messages,
    toolCalls: Nullable(Type.Array(Json), {
      description: "the tool calls the model asked for: { id, name, arguments }",
    }),
    toolDefinitions: Nullable(Json, { description: "the tools offered to the model" }),
    parameters: Nullable(Json, { description: "request parameters: temperature, max_tokens, ..." }),
    responseId: Nullable(Type.String({ description: "gen_ai.response.id" })),
    finishReasons: Type.Array(Type.String()),
    errorType: Nullable(Type.String({ description: "error.type" })),
    cacheReadInputTokens: Tokens,
    cacheCreationInputTokens: Tokens,
    reasoningTokens: Tokens,
    timeToFirstChunkMs: Nullable(Type.Number({ description: "streaming: time to the first chunk" })),
  },
  { $id: "Generation", description: 'A span\'s model call (docs/observability.md "Mapping")' },
);

export const SpanToolCallView = Type.Object(
  {
    id: Nullable(Type.String()),
    name: Type.String(),
    type: Nullable(Type.String()),
    arguments: Nullable(Json),
    result: Nullable(Json),
  },
  { $id: "SpanToolCall", description: "A tool execution span's call (gen_ai.tool.*, tool.*, ai.toolCall.*)" },
);

export const SpanView = Type.Object(
  {
    spanId: Type.String(),
    parentSpanId: Nullable(Type.String()),
    name: Type.String(),
    kind: OneOf(["unspecified", "internal", "server", "client", "producer", "consumer"]),
    startTime: Timestamp,
    endTime: Timestamp,
    status: TraceStatus,
    statusMessage: Nullable(Type.String()),
    scope: Nullable(Type.String({ description: "the instrumentation scope's name" })),
    attributes: Type.Record(Type.String(), Json, { description: "every attribute as it came" }),
    resourceAttributes: Type.Record(Type.String(), Json),
    events: Type.Array(Json),
    generation: Nullable(ref(GenerationView)),
    toolCall: Nullable(ref(SpanToolCallView)),
    logEvents: Type.Array(Json, {
      description:
        "GenAI events received as OTLP log records in this span ({ name, time, attributes, body }, as they came); the generation reads them",
    }),
    unmappedAttributes: Type.Array(Type.String(), {
      description: "the attribute keys Kiln's mapping did not read, in the order they came, at most 64",
    }),
    unmappedAttributesTruncated: Type.Boolean({ description: "more keys were unmapped than the list holds" }),
    continuedByRunId: Nullable(
      Type.String({
        description:
          "the Kiln run this caller's span called (its child is the run's root span): the run's own model calls are counted, this span's usage and cost are not counted again",
      }),
    ),
    children: Type.Array(Type.String(), { description: "the ids of the spans whose parent this is" }),
  },
  { $id: "Span" },
);

const traceProperties = {
  traceId: Type.String({ description: "32 lowercase hex digits" }),
  organizationId: Type.String(),
  name: Type.String({ description: "the root span's name" }),
  sessionId: Nullable(Type.String({ description: "session.id, else gen_ai.conversation.id" })),
  status: TraceStatus,
  startTime: Timestamp,
  endTime: Timestamp,
  spanCount: Type.Integer(),
  models: Type.Array(Type.String()),
  inputTokens: Tokens,
  outputTokens: Tokens,
  costUsd: Nullable(Type.Number(), { description: "the total in USD; null when a generation is unpriced" }),
  userId: Nullable(Type.String({ description: "user.id, enduser.id or ai.telemetry.metadata.userId" })),
  runId: Nullable(Type.String({ description: "the Kiln run the trace records (kiln.run.id)" })),
  label: Nullable(Type.String({ description: "that run's label (kiln.run.label)" })),
};

export const TraceView = Type.Object(traceProperties, { $id: "Trace" });

export const TraceDetailView = Type.Object(
  {
    ...traceProperties,
    rootSpanIds: Type.Array(Type.String()),
    spans: Type.Array(ref(SpanView), { description: "ordered by start time; children link the tree" }),
  },
  { $id: "TraceDetail" },
);

const fromTraces = answersOf("execution");
const orNull = (s: string) => s || null;
const count = (n: bigint | undefined) => (n === undefined ? null : Number(n));
const parsed = (text: JsonText | undefined): unknown => (text ? JSON.parse(text.json) : null);

export const generationView = (g: Generation) => ({
  operation: orNull(g.operation),
  requestModel: orNull(g.requestModel),
  responseModel: orNull(g.responseModel),
  provider: orNull(g.provider),
  inputTokens: count(g.inputTokens),
  outputTokens: count(g.outputTokens),
  costUsd: g.costUsd ?? null,
  inputMessages: parsed(g.inputMessages) as unknown[] | null,
  outputMessages: parsed(g.outputMessages) as unknown[] | null,
  systemInstructions: parsed(g.systemInstructions) as unknown[] | null,
  toolCalls: parsed(g.toolCalls) as unknown[] | null,
  toolDefinitions: parsed(g.toolDefinitions),
  parameters: parsed(g.parameters),
  responseId: orNull(g.responseId),
  finishReasons: g.finishReasons,
  errorType: orNull(g.errorType),
  cacheReadInputTokens: count(g.cacheReadInputTokens),
  cacheCreationInputTokens: count(g.cacheCreationInputTokens),
  reasoningTokens: count(g.reasoningTokens),
  timeToFirstChunkMs: g.timeToFirstChunkMs ?? null,
});

const toolCallView = (t: ToolCall) => ({
  id: orNull(t.id),
  name: t.name,
  type: orNull(t.type),
  arguments: parsed(t.arguments),
  result: parsed(t.result),
});

export const traceView = fromTraces.view("trace", (t: Trace) => ({
  traceId: t.traceId,
  organizationId: t.organizationId,
  name: t.name,
  sessionId: orNull(t.sessionId),
  status: t.status as Status,
  startTime: iso(t.startTime) ?? "",
  endTime: iso(t.endTime) ?? "",
  spanCount: t.spanCount,
  models: t.models,
  inputTokens: count(t.inputTokens),
  outputTokens: count(t.outputTokens),
  costUsd: t.costUsd ?? null,
  userId: orNull(t.userId),
  runId: orNull(t.runId),
  label: orNull(t.label),
}));

export const SessionView = Type.Object(
  {
    sessionId: Type.String(),
    organizationId: Type.String(),
    traceCount: Type.Integer(),
    firstTime: Type.String({ format: "date-time", description: "its earliest trace's start" }),
    lastTime: Type.String({ format: "date-time", description: "its latest trace's end" }),
    inputTokens: Tokens,
    outputTokens: Tokens,
    totalTokens: Tokens,
    costUsd: Nullable(Type.Number(), { description: "the total in USD; null when a model call is unpriced" }),
    userId: Nullable(Type.String({ description: "the first end user its traces name" })),
  },
  { $id: "Session", description: "The traces sharing a session.id (or gen_ai.conversation.id, ...)" },
);

export const SessionTraceView = Type.Object(
  {
    ...traceProperties,
    input: Nullable(Json, {
      description: "what the trace was asked: the root's input, else its first model call's messages",
    }),
    output: Nullable(Json, { description: "what it answered: the root's output, else its last model call's output" }),
  },
  { $id: "SessionTrace" },
);

export const SessionDetailView = Type.Object(
  {
    ...SessionView.properties,
    traces: Type.Array(ref(SessionTraceView), { description: "in start order, a page at a time" }),
    nextCursor: Nullable(Type.String({ description: "the next page of traces; null on the last" })),
  },
  { $id: "SessionDetail" },
);

export const sessionView = fromTraces.view("session", (s: Session) => ({
  sessionId: s.sessionId,
  organizationId: s.organizationId,
  traceCount: s.traceCount,
  firstTime: iso(s.firstTime) ?? "",
  lastTime: iso(s.lastTime) ?? "",
  inputTokens: count(s.inputTokens),
  outputTokens: count(s.outputTokens),
  totalTokens:
    s.inputTokens === undefined && s.outputTokens === undefined
      ? null
      : (count(s.inputTokens) ?? 0) + (count(s.outputTokens) ?? 0),
  costUsd: s.costUsd ?? null,
  userId: orNull(s.userId),
}));

export const sessionDetailView = (r: GetSessionResponse) => ({
  ...sessionView(r.session),
  traces: r.traces.map((t) => ({ ...traceView(t.trace), input: parsed(t.input), output: parsed(t.output) })),
  nextCursor: r.nextCursor || null,
});

export function traceDetailView(r: { trace?: Trace; spans: Span[] }) {
  const ids = new Set(r.spans.map((s) => s.spanId));
  const children = new Map<string, string[]>();
  for (const s of r.spans) {
    if (ids.has(s.parentSpanId)) children.set(s.parentSpanId, [...(children.get(s.parentSpanId) ?? []), s.spanId]);
  }
  return {
    ...traceView(r.trace),
    rootSpanIds: r.spans.filter((s) => !ids.has(s.parentSpanId)).map((s) => s.spanId),
    spans: r.spans.map((s) => ({
      spanId: s.spanId,
      parentSpanId: orNull(s.parentSpanId),
      name: s.name,
      kind: s.kind as "unspecified" | "internal" | "server" | "client" | "producer" | "consumer",
      startTime: iso(s.startTime) ?? "",
      endTime: iso(s.endTime) ?? "",
      status: s.status as Status,
      statusMessage: orNull(s.statusMessage),
      scope: orNull(s.scopeName),
      attributes: (parsed(s.attributes) ?? {}) as Record<string, unknown>,
      resourceAttributes: (parsed(s.resourceAttributes) ?? {}) as Record<string, unknown>,
      events: (parsed(s.events) ?? []) as unknown[],
      generation: s.generation ? generationView(s.generation) : null,
      toolCall: s.toolCall ? toolCallView(s.toolCall) : null,
      logEvents: (parsed(s.logEvents) as unknown[] | null) ?? [],
      unmappedAttributes: s.unmappedAttributes,
      unmappedAttributesTruncated: s.unmappedAttributesTruncated,
      continuedByRunId: orNull(s.continuedByRunId),
      children: children.get(s.spanId) ?? [],
    })),
  };
}
