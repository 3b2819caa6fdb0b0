/**
 * A tool call that failed in a way the model should hear about: bad input, a refused host, an
 * HTTP error. These become the `error` of a tool call (api.md "Runs": `toolCalls[].error`), they
 * are never thrown to the caller of the executor.
 */
import type { FieldIssue } from "@kiln/kit/errors";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type ToolErrorCode =
  /** The input does not match the tool version's `inputSchema`; `details` lists the problems. */
  | "invalid_tool_input"
  /** The stored tool cannot run: unknown type, malformed config, an input schema that does not compile. */
  | "invalid_tool_config"
  /** The URL's host is not on the allowlist. */
  | "host_not_allowed"
  /** The host is (or resolves to) an address http tools may not reach: private, loopback, link-local… */
  | "address_not_allowed"
  /** The server answered with a redirect (3xx other than 304). */
  | "redirect_not_followed"
  /** No complete response within the tool's timeout (at most 10 s). */
  | "timeout"
  /** The response body exceeded the limit (1 MiB); reading stopped there. */
  | "response_too_large"
  /** The server answered with a status other than 2xx; `status` holds it. */
  | "http_error"
  /** The response said it was JSON but did not parse. */
  | "invalid_response"
  /** DNS, connection, TLS or protocol failure. */
  | "network_error";

export interface ToolError {
  code: ToolErrorCode;
  /** Meant for the model and the run record: never holds header values. */
  message: string;
  /** The HTTP status, for `http_error` and `redirect_not_followed`. */
  status?: number;
  /** Field problems, for `invalid_tool_input` and `invalid_tool_config`. */
  details?: FieldIssue[];
}

/** Thrown inside the tool modules and turned into a `ToolError` result by the executor. */
export class ToolFailure extends Error {
  readonly error: ToolError;

  constructor(code: ToolErrorCode, message: string, extra: Pick<ToolError, "status" | "details"> = {}) {
    super(message);
    this.name = "ToolFailure";
    this.error = { code, message, ...extra };
  }
}
