import { createGunzip } from "node:zlib";
import { fromBinary, fromJson, type JsonValue, toBinary, toJson } from "@bufbuild/protobuf";
import {
  type ExportTraceServiceRequest,
  ExportTraceServiceRequestSchema,
  ExportTraceServiceResponseSchema,
} from "@kiln/proto/otlp/trace-service";
import { HttpError } from "../errors.js";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { organizationOf } from "./catalog-requests.js";

/** OTLP/HTTP trace ingestion (docs/observability.md "Ingestion"): limits of one request. */
export const OTLP_LIMITS = { bodyBytes: 4 * 1024 * 1024, spansPerRequest: 10_000 } as const;

const PROTOBUF = "application/x-protobuf";

/** OTLP/JSON writes trace and span ids as hex where protobuf's JSON mapping expects base64. */
function idsAsBase64(body: unknown): unknown {
  const toBase64 = (o: Record<string, unknown>, key: string) => {
    const v = o[key];
    if (typeof v === "string" && /^([0-9a-fA-F]{2})*$/.test(v)) o[key] = Buffer.from(v, "hex").toString("base64");
  };
  const list = (o: unknown, key: string): Record<string, unknown>[] => {
    const v = o && typeof o === "object" ? (o as Record<string, unknown>)[key] : undefined;
    return Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => !!x && typeof x === "object") : [];
  };
  for (const rs of list(body, "resourceSpans"))
    for (const ss of list(rs, "scopeSpans"))
      for (const span of list(ss, "spans")) {
        for (const key of ["traceId", "spanId", "parentSpanId"]) toBase64(span, key);
        for (const link of list(span, "links")) for (const key of ["traceId", "spanId"]) toBase64(link, key);
      }
  return body;
}

function decoded(body: unknown, protobuf: boolean): ExportTraceServiceRequest {
  try {
    if (protobuf) return fromBinary(ExportTraceServiceRequestSchema, body as Buffer);
    return fromJson(ExportTraceServiceRequestSchema, idsAsBase64(body) as JsonValue, { ignoreUnknownFields: true });
  } catch (e) {
    throw new HttpError("invalid_argument", `the body is not an OTLP trace export: ${(e as Error).message}`);
  }
}

/**
 * POST /otel/v1/traces: a stock OTLP/HTTP exporter pointed at `<base>/otel` (protobuf or JSON,
 * optionally gzip), authenticated with an API key holding `traces:write`. Answered once the spans
 * are stored; spans refused one by one come back as OTLP's partial success.
 */
export function registerOtlpRoutes(app: GatewayApp, deps: GatewayDeps): void {
  app.register(async (otlp) => {
    otlp.addContentTypeParser(PROTOBUF, { parseAs: "buffer" }, (_req, raw, done) => done(null, raw));
    otlp.addHook("preParsing", async (request, _reply, payload) => {
      const encoding = request.headers["content-encoding"]?.toLowerCase() ?? "identity";
      if (encoding === "identity") return payload;
      if (encoding !== "gzip") throw new HttpError("invalid_argument", "content-encoding must be gzip or identity");
      // The limit then counts the bytes after decompression.
      delete request.headers["content-length"];
      return payload.pipe(createGunzip());
    });
    otlp.post(
      "/otel/v1/traces",
      { bodyLimit: OTLP_LIMITS.bodyBytes, schema: { hide: true } },
      async (request, reply) => {
        const protobuf = request.headers["content-type"]?.startsWith(PROTOBUF) ?? false;
        const message = decoded(request.body, protobuf);
        const spans = message.resourceSpans.reduce(
          (n, rs) => n + rs.scopeSpans.reduce((m, ss) => m + ss.spans.length, 0),
          0,
        );
        if (spans > OTLP_LIMITS.spansPerRequest) {
          throw new HttpError(
            "invalid_argument",
            `at most ${OTLP_LIMITS.spansPerRequest} spans per request; this one holds ${spans}`,
          );
        }
        const r = await deps.clients.traces.ingestSpans(
          { organizationId: organizationOf(request, undefined), resourceSpans: message.resourceSpans },
          rpcOptions(request),
        );
        const answer = {
          $typeName: "opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse" as const,
          partialSuccess:
            r.rejectedSpans > 0n
              ? {
                  $typeName: "opentelemetry.proto.collector.trace.v1.ExportTracePartialSuccess" as const,
                  rejectedSpans: r.rejectedSpans,
                  errorMessage: r.errorMessage,
                }
              : undefined,
        };
        if (protobuf) return reply.type(PROTOBUF).send(Buffer.from(toBinary(ExportTraceServiceResponseSchema, answer)));
        return reply.type("application/json").send(toJson(ExportTraceServiceResponseSchema, answer));
      },
    );
  });
}
