/**
 * Errors of `POST /v1/messages` (and of any /v1 request an Anthropic client sends, which carries
 * `anthropic-version`) in Anthropic's error shape, `{type: "error", error: {type, message},
 * request_id}`, with Anthropic's statuses (docs/anthropic-compatible.md "Errors"). Read from the
 * OpenAI error of the same failure (`openAiErrorOf`), so both shapes say the same thing.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { withRetryAfter } from "../errors.js";
import { OpenAiHttpError, openAiErrorOf } from "./openai-errors.js";

export type AnthropicErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error";

export interface AnthropicError {
  type: "error";
  error: {
    type: AnthropicErrorType;
    message: string;
    /** Kiln's: the stored run a failure belongs to. */
    kiln_run_id?: string;
    /** Kiln's: false when a retry would only run (and store) again; the `x-should-retry` header says the same. */
    should_retry?: boolean;
  };
  request_id: string;
}

const TYPE_OF_STATUS: Record<number, AnthropicErrorType> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  // A dead peer (Kiln's `unavailable`): safe to retry, as Anthropic's overloaded answers are.
  503: "overloaded_error",
};

/** A Kiln error (any kind `openAiErrorOf` reads) in Anthropic's shape, with its status and headers. */
export function anthropicErrorOf(
  error: unknown,
  requestId: string,
): { status: number; body: AnthropicError; headers: Record<string, string> } {
  const { status, body } = openAiErrorOf(error, requestId);
  const { message, param, kiln_run_id, should_retry } = body.error;
  const type = TYPE_OF_STATUS[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
  // Anthropic names the field in the message (`messages.0.content: …`): Kiln names it the OpenAI routes' way.
  const text = param && status === 400 && !message.startsWith(param) ? `${param}: ${message}` : message;
  return {
    status,
    body: {
      type: "error",
      error: {
        type,
        message: text,
        ...(kiln_run_id !== undefined && { kiln_run_id }),
        ...(should_retry !== undefined && { should_retry }),
      },
      request_id: requestId,
    },
    headers: error instanceof OpenAiHttpError ? { ...error.headers } : {},
  };
}

/** Whether a /v1 request's errors leave in Anthropic's shape: the Messages route, or a client that names its Anthropic version. */
export const isAnthropicRequest = (request: FastifyRequest) =>
  /^\/v1\/messages(?:[/?]|$)/.test(request.url) || request.headers["anthropic-version"] !== undefined;

/** The error handler of the Anthropic-shaped /v1 requests. */
export function handleAnthropicError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { status, body, headers } = anthropicErrorOf(error, request.id);
  if (status >= 500) request.log.error({ err: error }, "request failed");
  return reply
    .code(status)
    .headers(withRetryAfter(status, { ...headers, "request-id": request.id }, reply))
    .send(body);
}
