import type { FastifyReply, FastifyRequest } from "fastify";
import { envelopeOf, withRetryAfter } from "../errors.js";

/** Errors of the /v1 routes in OpenAI's error shape and with OpenAI's statuses. */

type OpenAiErrorType = "invalid_request_error" | "authentication_error" | "permission_error" | "requests" | "api_error";

export interface OpenAiError {
  error: {
    message: string;
    type: OpenAiErrorType;
    param: string | null;
    code: string | null;
    /** Kiln's: the stored run a failure belongs to. */
    kiln_run_id?: string;
    /** Kiln's: false when a retry would only run (and store) again; the `x-should-retry` header says the same. */
    should_retry?: boolean;
  };
}

/** A Kiln error (any kind `envelopeOf` reads) in OpenAI's error shape, with OpenAI's status. */
export function openAiErrorOf(error: unknown, requestId: string): { status: number; body: OpenAiError } {
  if (error instanceof OpenAiHttpError) return { status: error.status, body: error.body };
  const { status, body } = envelopeOf(error, requestId);
  const e = body.error;
  const detail = e.details[0];
  const message = detail ? `${e.message}: ${e.details.map((d) => `${d.field} ${d.issue}`).join("; ")}` : e.message;
  const param = detail?.field ?? null;
  switch (e.code) {
    case "unauthenticated":
      return {
        status: 401,
        body: { error: { message, type: "invalid_request_error", param: null, code: "invalid_api_key" } },
      };
    case "permission_denied":
      return { status: 403, body: { error: { message, type: "permission_error", param: null, code: null } } };
    case "not_found":
      return {
        status: 404,
        body: { error: { message, type: "invalid_request_error", param: "model", code: "model_not_found" } },
      };
    case "resource_exhausted":
      return { status: 429, body: { error: { message, type: "requests", param: null, code: "rate_limit_exceeded" } } };
    default:
      if (status < 500) {
        return { status: 400, body: { error: { message, type: "invalid_request_error", param, code: null } } };
      }
      return { status, body: { error: { message, type: "api_error", param: null, code: e.code } } };
  }
}

/** An error already in OpenAI's shape, with the headers it leaves with. */
export class OpenAiHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: OpenAiError,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.error.message);
  }
}

export const badRequest = (message: string, param: string | null) =>
  new OpenAiHttpError(400, { error: { message, type: "invalid_request_error", param, code: null } });

export const modelNotFound = (model: string, why = "does not exist or you do not have access to it") =>
  new OpenAiHttpError(404, {
    error: {
      message: `The model \`${model}\` ${why}.`,
      type: "invalid_request_error",
      param: "model",
      code: "model_not_found",
    },
  });

/** A /v1 path no route serves, as OpenAI answers it. */
export const unknownUrl = (method: string, url: string) =>
  new OpenAiHttpError(404, {
    error: {
      message: `Invalid URL (${method} ${url.split("?")[0]})`,
      type: "invalid_request_error",
      param: null,
      code: null,
    },
  });

export const isOpenAiPath = (url: string) => url === "/v1" || url.startsWith("/v1/") || url.startsWith("/v1?");

/** The error handler of /v1 routes. */
export function handleOpenAiError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { status, body } = openAiErrorOf(error, request.id);
  if (status >= 500) request.log.error({ err: error }, "request failed");
  const headers: Record<string, string> = error instanceof OpenAiHttpError ? { ...error.headers } : {};
  if (status === 401) headers["www-authenticate"] = 'Bearer error="invalid_token"';
  return reply
    .code(status)
    .headers(withRetryAfter(status, headers, reply))
    .send(body);
}
