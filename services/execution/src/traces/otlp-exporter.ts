/**
 * Sends Kiln's run spans to an OTLP/HTTP endpoint as protobuf (docs/observability.md "Export"):
 * batched, off the run path, with bounded retries and a bounded queue. Spans beyond the queue are
 * dropped, counted and logged; nothing here ever waits on the caller's turn.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import type { Logger } from "@kiln/kit/logger";
import { decodeJson } from "@kiln/kit/store";
import { type AnyValue, AnyValueSchema, type KeyValue, KeyValueSchema } from "@kiln/proto/otlp/common";
import { type Span, Span_SpanKind, SpanSchema, Status_StatusCode } from "@kiln/proto/otlp/trace";
import { ExportTraceServiceRequestSchema } from "@kiln/proto/otlp/trace-service";
import type { JsonValue } from "./otlp-values.js";
import type { SpanDoc } from "./trace-store.js";

export interface OtlpExportConfig {
  /** The traces endpoint itself (`…/v1/traces`). */
  url: string;
  headers: Record<string, string>;
  /** One request's deadline. */
  timeoutMs: number;
}

export interface OtlpExporterOptions extends OtlpExportConfig {
  logger: Logger;
  /** Spans waiting beyond this are dropped; default 20,000. */
  maxQueue?: number;
  /** Spans per request; default 512. */
  maxBatch?: number;
  /** Attempts of one batch (first included) on a connection failure, 429 or 5xx; default 5. */
  maxAttempts?: number;
  /** The first wait between attempts, doubled each time; default 500 ms. */
  backoffMs?: number;
  fetch?: typeof fetch;
}

const KINDS: Record<string, Span_SpanKind> = {
  internal: Span_SpanKind.INTERNAL,
  server: Span_SpanKind.SERVER,
  client: Span_SpanKind.CLIENT,
  producer: Span_SpanKind.PRODUCER,
  consumer: Span_SpanKind.CONSUMER,
};
const STATUSES = { unset: Status_StatusCode.UNSET, ok: Status_StatusCode.OK, error: Status_StatusCode.ERROR };
const nanos = (d: Date) => BigInt(d.getTime()) * 1_000_000n;

function anyValue(v: JsonValue): AnyValue {
  if (typeof v === "string") return create(AnyValueSchema, { value: { case: "stringValue", value: v } });
  if (typeof v === "boolean") return create(AnyValueSchema, { value: { case: "boolValue", value: v } });
  if (typeof v === "number")
    return create(AnyValueSchema, {
      value: Number.isSafeInteger(v) ? { case: "intValue", value: BigInt(v) } : { case: "doubleValue", value: v },
    });
  if (Array.isArray(v))
    return create(AnyValueSchema, { value: { case: "arrayValue", value: { values: v.map(anyValue) } } });
  if (v && typeof v === "object")
    return create(AnyValueSchema, { value: { case: "kvlistValue", value: { values: keyValues(v) } } });
  return create(AnyValueSchema, {});
}

const keyValues = (o: Record<string, JsonValue>): KeyValue[] =>
  Object.entries(o).map(([key, v]) => create(KeyValueSchema, { key, value: anyValue(v) }));

/** A stored span as OTLP. */
export function otlpSpanOf(s: SpanDoc): Span {
  return create(SpanSchema, {
    traceId: Buffer.from(s.traceId, "hex"),
    spanId: Buffer.from(s.spanId, "hex"),
    parentSpanId: s.parentSpanId ? Buffer.from(s.parentSpanId, "hex") : new Uint8Array(),
    name: s.name,
    kind: KINDS[s.kind] ?? Span_SpanKind.UNSPECIFIED,
    startTimeUnixNano: nanos(s.startTime),
    endTimeUnixNano: nanos(s.endTime),
    attributes: keyValues(decodeJson<Record<string, JsonValue>>(s.attributes)),
    status: { code: STATUSES[s.status], message: s.statusMessage },
  });
}

/** One request body: the spans grouped by organization (a resource attribute, so a collector can route on it). */
export function exportRequestOf(spans: readonly SpanDoc[]): Uint8Array {
  const byOrganization = new Map<string, SpanDoc[]>();
  for (const s of spans) byOrganization.set(s.organizationId, [...(byOrganization.get(s.organizationId) ?? []), s]);
  const resourceSpans = [...byOrganization].map(([organizationId, docs]) => ({
    resource: {
      attributes: keyValues({
        ...decodeJson<Record<string, JsonValue>>(docs[0]?.resourceAttributes ?? "{}"),
        "kiln.organization.id": organizationId,
      }),
    },
    scopeSpans: [{ scope: { name: docs[0]?.scopeName ?? "kiln" }, spans: docs.map(otlpSpanOf) }],
  }));
  return toBinary(ExportTraceServiceRequestSchema, create(ExportTraceServiceRequestSchema, { resourceSpans }));
}

const retriable = (status: number) => status === 429 || status === 502 || status === 503 || status === 504;

export type OtlpExporter = ReturnType<typeof createOtlpExporter>;

export function createOtlpExporter(options: OtlpExporterOptions) {
  const maxQueue = options.maxQueue ?? 20_000;
  const maxBatch = options.maxBatch ?? 512;
  const maxAttempts = options.maxAttempts ?? 5;
  const backoffMs = options.backoffMs ?? 500;
  const send = options.fetch ?? fetch;
  const counts = { sent: 0, dropped: 0, failed: 0 };
  let queue: SpanDoc[] = [];
  let sending: Promise<void> | null = null;
  /** Closing: a batch is tried once more, never waited on again. */
  let closing = false;

  /** One batch, retried with backoff; true once the endpoint took it. */
  async function post(batch: SpanDoc[]): Promise<boolean> {
    const body = exportRequestOf(batch);
    for (let attempt = 1; ; attempt++) {
      let status = 0;
      try {
        const r = await send(options.url, {
          method: "POST",
          headers: { ...options.headers, "content-type": "application/x-protobuf" },
          body,
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        await r.arrayBuffer().catch(() => undefined);
        if (r.ok) return true;
        status = r.status;
      } catch {
        // A connection failure or the deadline: retried like a 503.
      }
      if ((status !== 0 && !retriable(status)) || attempt >= maxAttempts || closing) {
        options.logger.warn({ spans: batch.length, status, attempts: attempt }, "run spans were not exported");
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, backoffMs * 2 ** (attempt - 1)));
    }
  }

  function drainLoop(): void {
    if (sending || queue.length === 0) return;
    sending = (async () => {
      while (queue.length > 0) {
        const batch = queue.slice(0, maxBatch);
        queue = queue.slice(batch.length);
        if (await post(batch)) counts.sent += batch.length;
        else counts.failed += batch.length;
      }
    })().finally(() => {
      sending = null;
    });
  }

  return {
    /** Queues spans (an in-memory append); those beyond the queue's bound are dropped and counted. */
    enqueue(spans: readonly SpanDoc[]): void {
      const room = Math.max(0, maxQueue - queue.length);
      if (room < spans.length) {
        counts.dropped += spans.length - room;
        options.logger.warn({ dropped: spans.length - room, total: counts.dropped }, "the span export queue is full");
      }
      if (room > 0) queue.push(...spans.slice(0, room));
      drainLoop();
    },
    /** Resolves once the queue is empty (sent, or given up on). */
    async flush(): Promise<void> {
      while (sending) await sending;
    },
    /** Closing: resolves once the queue is empty, each batch tried once more at most. */
    async drain(): Promise<void> {
      closing = true;
      while (sending) await sending;
    },
    counts: () => ({ ...counts, queued: queue.length }),
  };
}
