/**
 * Browser hardening (docs/security.md "The console in the browser"): every answer carries nosniff,
 * a referrer policy and a frame ban; the console's pages a Content-Security-Policy that allows only
 * the gateway's own origin (the built console has no inline script or style, loads nothing from
 * elsewhere and calls only /api), and every other answer a policy that allows nothing, so an API
 * answer opened as a page can run nothing.
 *
 * A hook rather than @fastify/helmet: the headers are five constant strings, and helmet's defaults
 * would have to be turned off one by one (its `upgrade-insecure-requests` makes a browser fetch the
 * console's assets over https from a gateway served over plain http on a LAN address, and
 * Strict-Transport-Security belongs to the TLS terminator in front, not to the gateway).
 */
import type { FastifyReply, FastifyRequest } from "fastify";

/** The console's pages: its own scripts, styles and API only. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** Everything that is not a page (JSON, assets, event streams). */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** On every answer, whatever its type. */
export const COMMON_SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  // Stricter than strict-origin-when-cross-origin (nothing at all leaves for another origin), and
  // unlike no-referrer it keeps the console's own writes' Origin header instead of "null".
  "referrer-policy": "same-origin",
} as const;

/** The headers of an answer of this content type. */
export function securityHeadersOf(contentType: string | undefined): Record<string, string> {
  const page = contentType?.startsWith("text/html") ?? false;
  return { ...COMMON_SECURITY_HEADERS, "content-security-policy": page ? CONSOLE_CSP : API_CSP };
}

/** An onSend hook: the headers on every answer sent through Fastify (a hijacked reply sets them itself). */
export async function addSecurityHeaders<P>(_request: FastifyRequest, reply: FastifyReply, payload: P): Promise<P> {
  const type = reply.getHeader("content-type");
  reply.headers(securityHeadersOf(typeof type === "string" ? type : undefined));
  return payload;
}
