/** Which failures of a provider call are retried (remote-call.ts, every remote provider), how long to wait, and what of the provider's text a client may see. */

const EXCERPT_CHARS = 200;
const INITIAL_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;

export function isRetryable(status: number, headers: Headers): boolean {
  const told = headers.get("x-should-retry");
  if (told === "true") return true;
  if (told === "false") return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** A connection that failed is tried again, except a refused redirect (a wrong base URL stays wrong). */
export function isRetryableFailure(failed: unknown): boolean {
  // An address the outbound policy refuses stays refused (services' policy fetches answer this code).
  const code = codeOf(failed);
  return code !== "REDIRECT_REFUSED" && code !== "ADDRESS_NOT_ALLOWED";
}

/** The SDK's backoff before retry number `retriesSoFar + 1`: 0.5 s doubling up to 8 s, less up to 25 %. */
export function backoffMs(retriesSoFar: number): number {
  return Math.min(INITIAL_BACKOFF_MS * 2 ** retriesSoFar, MAX_BACKOFF_MS) * (1 - Math.random() * 0.25);
}

/** The wait a response asks for: retry-after-ms first, then Retry-After (seconds or an HTTP date). */
export function retryAfterMsOf(headers: Headers): number | undefined {
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (!Number.isNaN(ms) && ms > 0) return ms;
  const raw = headers.get("retry-after");
  if (!raw) return undefined;
  const seconds = Number.parseFloat(raw);
  if (!Number.isNaN(seconds)) return seconds * 1000;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : at - Date.now();
}

/** The socket error's code of a failed fetch: TypeError("fetch failed") with cause { code: "ECONNREFUSED" }. */
export function codeOf(failed: unknown): string | undefined {
  const cause = (failed as { cause?: { code?: unknown; message?: unknown; cause?: { code?: unknown } } } | undefined)
    ?.cause;
  // The global fetch (a `fetch` option) refuses a redirect with this message and no code.
  if (cause?.message === "unexpected redirect") return "REDIRECT_REFUSED";
  const code = cause?.code ?? cause?.cause?.code;
  return typeof code === "string" && /^[A-Z_]+$/.test(code) ? code : undefined;
}

export function connectionDetail(failed: unknown): string {
  const code = codeOf(failed);
  return code ? ` (${code})` : "";
}

/** The provider's own message of an error answer: `error.message` of a JSON body, else the raw body. */
export function providerMessageOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string } | null;
    const error = body?.error;
    if (typeof error === "string") return error;
    if (error && typeof error.message === "string") return error.message;
    if (error !== undefined) return JSON.stringify(error);
  } catch {
    // Not JSON: the text itself.
  }
  return text;
}

/** A short, single-line excerpt with credentials removed: the only provider text shown to clients. */
export function safeExcerpt(text: string, secrets: string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.replaceAll(secret, "[redacted]");
  out = out
    .replace(/\bBearer\s+\S+/gi, "Bearer [redacted]")
    .replace(/\b(sk|rk|pk|sess)[-_][A-Za-z0-9*._-]{4,}/g, "[redacted]")
    .replace(/\s+/g, " ")
    .trim();
  return out.length > EXCERPT_CHARS ? `${Array.from(out).slice(0, EXCERPT_CHARS).join("")}…` : out;
}
