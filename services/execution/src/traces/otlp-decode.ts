/**
 * An OTLP/HTTP trace export's body, decoded here rather than in the gateway: the gateway forwards
 * the body as it came, and the decoding runs inside the ingestion bound (ingest-limiter.ts) with
 * the mapping and the writes, so none of ingestion's CPU escapes it (docs/observability.md "Scale").
 */
import { fromBinary, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { invalidArgument } from "@kiln/kit/errors";
import type { ResourceLogs } from "@kiln/proto/otlp/logs";
import { ExportLogsServiceRequestSchema } from "@kiln/proto/otlp/logs-service";
import type { ResourceSpans } from "@kiln/proto/otlp/trace";
import { ExportTraceServiceRequestSchema } from "@kiln/proto/otlp/trace-service";

/**
 * OTLP/HTTP ingestion (docs/observability.md "Ingestion", "Logs"): spans, or log records, in one
 * request (the body's size is the gateway's limit).
 */
export const OTLP_LIMITS = { spansPerRequest: 10_000, logRecordsPerRequest: 10_000 } as const;

export const OTLP_PROTOBUF = "application/x-protobuf";

type Node = Record<string, unknown>;

/** OTLP/JSON writes trace and span ids as hex where protobuf's JSON mapping expects base64. */
function idsAsBase64(body: unknown, [resources, scopes, items]: readonly [string, string, string]): unknown {
  const toBase64 = (o: Node, key: string) => {
    const v = o[key];
    if (typeof v === "string" && /^([0-9a-fA-F]{2})*$/.test(v)) o[key] = Buffer.from(v, "hex").toString("base64");
  };
  const list = (o: unknown, key: string): Node[] => {
    const v = o && typeof o === "object" ? (o as Node)[key] : undefined;
    return Array.isArray(v) ? v.filter((x): x is Node => !!x && typeof x === "object") : [];
  };
  for (const rs of list(body, resources))
    for (const ss of list(rs, scopes))
      for (const span of list(ss, items)) {
        for (const key of ["traceId", "spanId", "parentSpanId"]) toBase64(span, key);
        for (const link of list(span, "links")) for (const key of ["traceId", "spanId"]) toBase64(link, key);
      }
  return body;
}

function isProtobuf(contentType: string): boolean {
  const protobuf = contentType.startsWith(OTLP_PROTOBUF);
  if (!protobuf && !contentType.startsWith("application/json"))
    throw invalidArgument(`an OTLP body is ${OTLP_PROTOBUF} or application/json, not "${contentType}"`);
  return protobuf;
}

const jsonOf = (body: Uint8Array): unknown =>
  JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));

/**
 * The resource logs of an ExportLogsServiceRequest in protobuf or OTLP/JSON (unknown JSON fields
 * ignored). A body that is not one, or holds more than `OTLP_LIMITS.logRecordsPerRequest` records,
 * is `invalid_argument`.
 */
export function decodeOtlpLogs(body: Uint8Array, contentType: string): ResourceLogs[] {
  const protobuf = isProtobuf(contentType);
  let resourceLogs: ResourceLogs[];
  try {
    resourceLogs = protobuf
      ? fromBinary(ExportLogsServiceRequestSchema, body).resourceLogs
      : fromJson(
          ExportLogsServiceRequestSchema,
          idsAsBase64(jsonOf(body), ["resourceLogs", "scopeLogs", "logRecords"]) as JsonValue,
          { ignoreUnknownFields: true },
        ).resourceLogs;
  } catch (e) {
    throw invalidArgument(`the body is not an OTLP logs export: ${(e as Error).message}`);
  }
  const records = resourceLogs.reduce((n, rl) => n + rl.scopeLogs.reduce((m, sl) => m + sl.logRecords.length, 0), 0);
  if (records > OTLP_LIMITS.logRecordsPerRequest) {
    throw invalidArgument(
      `at most ${OTLP_LIMITS.logRecordsPerRequest} log records per request; this one holds ${records}`,
    );
  }
  return resourceLogs;
}

/**
 * The resource spans of an ExportTraceServiceRequest in protobuf or OTLP/JSON (unknown JSON fields
 * ignored). A body that is not one, or holds more than `OTLP_LIMITS.spansPerRequest` spans, is
 * `invalid_argument`.
 */
export function decodeOtlpTraces(body: Uint8Array, contentType: string): ResourceSpans[] {
  const protobuf = isProtobuf(contentType);
  let resourceSpans: ResourceSpans[];
  try {
    resourceSpans = protobuf
      ? fromBinary(ExportTraceServiceRequestSchema, body).resourceSpans
      : fromJson(
          ExportTraceServiceRequestSchema,
          idsAsBase64(jsonOf(body), ["resourceSpans", "scopeSpans", "spans"]) as JsonValue,
          { ignoreUnknownFields: true },
        ).resourceSpans;
  } catch (e) {
    throw invalidArgument(`the body is not an OTLP trace export: ${(e as Error).message}`);
  }
  const spans = resourceSpans.reduce((n, rs) => n + rs.scopeSpans.reduce((m, ss) => m + ss.spans.length, 0), 0);
  if (spans > OTLP_LIMITS.spansPerRequest) {
    throw invalidArgument(`at most ${OTLP_LIMITS.spansPerRequest} spans per request; this one holds ${spans}`);
  }
  return resourceSpans;
}
