import type { components } from "./gen/kiln-api.js";

/** The error codes of the API (api.md "Errors"), one per HTTP status class. */
export type ErrorCode = components["schemas"]["ErrorEnvelope"]["error"]["code"];
export type ErrorDetail = components["schemas"]["ErrorEnvelope"]["error"]["details"][number];

/** The code a status stands for when a response carries no error envelope (a proxy's page, say). */
const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: "invalid_argument",
  401: "unauthenticated",
  403: "permission_denied",
  404: "not_found",
  409: "failed_precondition",
  413: "payload_too_large",
  429: "resource_exhausted",
  502: "provider_error",
  503: "unavailable",
  504: "provider_timeout",
};

const isEnvelope = (body: unknown): body is components["schemas"]["ErrorEnvelope"] =>
  typeof body === "object" && body !== null && typeof (body as { error?: { code?: unknown } }).error?.code === "string";

/** Seconds (`Retry-After: 30`) or an HTTP date, in milliseconds from now; undefined when absent or unreadable. */
export function retryAfterMsOf(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  // An HTTP date ("Wed, 21 Oct 2026 07:28:00 GMT") has letters; Date.parse would also take "-5".
  const at = /[a-z]/i.test(header) ? Date.parse(header) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** An answer of the API that is not a success: its status, code, message, field details and request id. */
export class KilnError extends Error {
  override readonly name = "KilnError";

  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[],
    /** The x-request-id of the answer: quote it when reporting a problem. */
    readonly requestId: string | undefined,
    /** From Retry-After (429, 503): how long the server asked to wait. */
    readonly retryAfterMs: number | undefined,
  ) {
    super(message);
  }

  /** The error a non-2xx response stands for, from its envelope when it has one. */
  static fromResponse(response: Response, body: unknown): KilnError {
    const retryAfterMs = retryAfterMsOf(response.headers.get("retry-after"));
    const headerId = response.headers.get("x-request-id") ?? undefined;
    if (isEnvelope(body)) {
      const { code, message, details, requestId } = body.error;
      return new KilnError(response.status, code, message, details ?? [], requestId ?? headerId, retryAfterMs);
    }
    const code = CODE_OF_STATUS[response.status] ?? "internal";
    const text = typeof body === "string" && body.trim() !== "" ? `: ${body.trim().slice(0, 200)}` : "";
    return new KilnError(response.status, code, `HTTP ${response.status}${text}`, [], headerId, retryAfterMs);
  }
}

/** A request (one attempt) that got no complete answer within its timeout. */
export class KilnTimeoutError extends Error {
  override readonly name = "KilnTimeoutError";

  constructor(
    readonly method: string,
    readonly url: string,
    readonly timeoutMs: number,
  ) {
    super(`${method} ${url} got no answer within ${timeoutMs} ms`);
  }
}
