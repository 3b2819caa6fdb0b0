import { ConnectError } from "@connectrpc/connect";
import { type FieldIssue, fieldIssuesOf, type SchemaError } from "@kiln/contracts/field-issues";
import { DomainError } from "@kiln/kit/errors";
import { bytesText, LIMITS } from "@kiln/kit/limits";
import { remoteErrorOf } from "@kiln/kit/rpc/errors";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import type { ERROR_CODES } from "./schemas.js";

/** The codes of the error envelope (documented in the OpenAPI document from the same list). */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The one table of api.md "Conventions": error code → HTTP status. */
export const STATUS_OF_CODE: Record<ErrorCode, number> = {
  invalid_argument: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  already_exists: 409,
  failed_precondition: 409,
  payload_too_large: 413,
  resource_exhausted: 429,
  internal: 500,
  provider_error: 502,
  unavailable: 503,
  provider_timeout: 504,
};

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details: FieldIssue[]; requestId: string };
}

/** An error the gateway answers with as it is (the REST edge's own checks). */
export class HttpError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: FieldIssue[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Fastify's own errors (validation, parsing, limits) in contract terms. */
function fromFastifyError(error: FastifyError, bodyLimit: number): HttpError | undefined {
  if (error.validation) {
    const context = (error as FastifyError & { validationContext?: string }).validationContext;
    const prefix = context === "body" ? "" : context === "querystring" ? "" : (context ?? "");
    // Named as every layer names schema errors (contracts/field-issues.ts); an issue with the body
    // as a whole (not an object, say) names the body.
    const details = fieldIssuesOf(error.validation as SchemaError[], prefix).map((d) => ({
      field: d.field || (context === "body" ? "body" : ""),
      issue: d.issue,
    }));
    return new HttpError("invalid_argument", "the request is invalid", details);
  }
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new HttpError(
        "payload_too_large",
        `the request body exceeds ${bytesText(bodyLimit)} (docs/api.md "Limits")`,
      );
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new HttpError("invalid_argument", "the request body must be JSON (Content-Type: application/json)");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return new HttpError("invalid_argument", "the request body is not valid JSON");
  }
  if (error.statusCode === 429) return new HttpError("resource_exhausted", error.message);
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new HttpError("invalid_argument", error.message);
  }
  return undefined;
}

/** The `Retry-After` a service's refusal named (a plan's month turning), when it named one. */
const waitOf = (e: { retryAfterSeconds?: number }): Record<string, string> =>
  e.retryAfterSeconds === undefined ? {} : { "retry-after": String(e.retryAfterSeconds) };

export function envelopeOf(
  error: unknown,
  requestId: string,
  bodyLimit: number = LIMITS.bodyBytes,
): { status: number; body: ErrorEnvelope; headers: Record<string, string> } {
  let e: HttpError | undefined;
  if (error instanceof HttpError) e = error;
  else if (error instanceof DomainError) e = new HttpError(error.kind, error.message, error.details, waitOf(error));
  else if (error instanceof ConnectError) {
    const r = remoteErrorOf(error);
    e = new HttpError(r.kind, r.message, r.details, waitOf(r));
  } else if (error instanceof Error && "code" in error) e = fromFastifyError(error as FastifyError, bodyLimit);
  const final = e ?? new HttpError("internal", "internal error");
  const headers: Record<string, string> = { ...final.headers };
  if (final.code === "unauthenticated") headers["www-authenticate"] = 'Bearer error="invalid_token"';
  // A dependency that is down (a process restarting, a store outage) is back within seconds: say so.
  if (final.code === "unavailable") headers["retry-after"] ??= "1";
  return {
    status: STATUS_OF_CODE[final.code],
    body: { error: { code: final.code, message: final.message, details: final.details, requestId } },
    headers,
  };
}

/** The wait a 429 asks for when what refused it named none (api.md "Errors": every 429 carries one). */
export const DEFAULT_RETRY_AFTER_SECONDS = 1;

/**
 * The one place every 429 gets its `Retry-After` (REST, /v1, MCP, OTLP): kept when the refusal set
 * one (the rate limit names its window's rest), else the default.
 */
export function withRetryAfter(status: number, headers: Record<string, string>, reply: FastifyReply) {
  if (status === 429 && headers["retry-after"] === undefined && !reply.hasHeader("retry-after")) {
    return { ...headers, "retry-after": String(DEFAULT_RETRY_AFTER_SECONDS) };
  }
  return headers;
}

/** Fastify's error handler: every failure leaves in the envelope; 5xx are logged with their cause. */
export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { status, body, headers } = envelopeOf(error, request.id, request.routeOptions.bodyLimit);
  if (status >= 500) request.log.error({ err: error }, "request failed");
  return reply
    .code(status)
    .headers(withRetryAfter(status, headers, reply))
    .send(body);
}
