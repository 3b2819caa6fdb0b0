import { createGunzip } from "node:zlib";
import { toBinary, toJson } from "@bufbuild/protobuf";
import { ExportLogsServiceResponseSchema } from "@kiln/proto/otlp/logs-service";
import { ExportTraceServiceResponseSchema } from "@kiln/proto/otlp/trace-service";
import type { FastifyReply, FastifyRequest } from "fastify";
import { HttpError } from "../errors.js";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { organizationOf } from "./catalog-requests.js";

/** OTLP/HTTP ingestion (docs/observability.md "Ingestion", "Logs"): the body's limit, after decompression. */
export const OTLP_BODY_BYTES = 4 * 1024 * 1024;

const PROTOBUF = "application/x-protobuf";
const JSON_TYPE = "application/json";

/** The body as the execution service takes it: its bytes and which of the two encodings they are. */
const otlpBodyOf = (request: FastifyRequest) => {
  const protobuf = (request.headers["content-type"] ?? "").startsWith(PROTOBUF);
  return { otlpBody: request.body as Buffer, otlpContentType: protobuf ? PROTOBUF : JSON_TYPE, protobuf };
};

/** OTLP's answer in the request's encoding. */
function answerIn<T extends Parameters<typeof toBinary>[0]>(
  reply: FastifyReply,
  protobuf: boolean,
  schema: T,
  answer: Parameters<typeof toBinary<T>>[1],
) {
  if (protobuf) return reply.type(PROTOBUF).send(Buffer.from(toBinary(schema, answer)));
  return reply.type(JSON_TYPE).send(toJson(schema, answer));
}

/**
 * POST /otel/v1/traces and /otel/v1/logs: a stock OTLP/HTTP exporter pointed at `<base>/otel` (protobuf or JSON,
 * optionally gzip), authenticated with an API key holding `traces:write`. The body goes to the
 * execution service as it came (decompressed): it is decoded there, inside the ingestion's bound
 * (services/execution/src/traces/otlp-decode.ts). Answered once the spans are stored; spans
 * refused one by one come back as OTLP's partial success.
 */
export function registerOtlpRoutes(app: GatewayApp, deps: GatewayDeps): void {
  app.register(async (otlp) => {
    // Both encodings arrive as bytes: nothing of the body is parsed in the gateway.
    otlp.removeContentTypeParser(JSON_TYPE);
    for (const type of [PROTOBUF, JSON_TYPE])
      otlp.addContentTypeParser(type, { parseAs: "buffer" }, (_req, raw, done) => done(null, raw));
    otlp.addHook("preParsing", async (request, _reply, payload) => {
      // API keys are ingestion's credential (docs/observability.md): a user's token names no
      // organization to ingest into, and is refused before the body is read.
      if (request.principal?.type !== "api_key") {
        throw new HttpError(
          "permission_denied",
          "OTLP ingestion takes an API key with traces:write: send Authorization: Bearer <API key>",
        );
      }
      const encoding = request.headers["content-encoding"]?.toLowerCase() ?? "identity";
      if (encoding === "identity") return payload;
      if (encoding !== "gzip") throw new HttpError("invalid_argument", "content-encoding must be gzip or identity");
      // The limit then counts the bytes after decompression.
      delete request.headers["content-length"];
      return payload.pipe(createGunzip());
    });
    otlp.post("/otel/v1/traces", { bodyLimit: OTLP_BODY_BYTES, schema: { hide: true } }, async (request, reply) => {
      const { protobuf, ...body } = otlpBodyOf(request);
      const r = await deps.clients.traces.ingestSpans(
        { organizationId: organizationOf(request, undefined), ...body },
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
      return answerIn(reply, protobuf, ExportTraceServiceResponseSchema, answer);
    });
    // GenAI events as log records (docs/observability.md "Logs"): the same credential, limits and bound.
    otlp.post("/otel/v1/logs", { bodyLimit: OTLP_BODY_BYTES, schema: { hide: true } }, async (request, reply) => {
      const { protobuf, ...body } = otlpBodyOf(request);
      const r = await deps.clients.traces.ingestLogs(
        { organizationId: organizationOf(request, undefined), ...body },
        rpcOptions(request),
      );
      const answer = {
        $typeName: "opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse" as const,
        partialSuccess:
          r.rejectedLogRecords > 0n
            ? {
                $typeName: "opentelemetry.proto.collector.logs.v1.ExportLogsPartialSuccess" as const,
                rejectedLogRecords: r.rejectedLogRecords,
                errorMessage: r.errorMessage,
              }
            : undefined,
      };
      return answerIn(reply, protobuf, ExportLogsServiceResponseSchema, answer);
    });
  });
}
