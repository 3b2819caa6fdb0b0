import type { CookieSerializeOptions } from "@fastify/cookie";
import { looksLikeApiKey } from "@kiln/kit/principal";
import type { FastifyRequest } from "fastify";
import { HttpError } from "../errors.js";

/**
 * The console's session (docs/security.md "Console session"): the access token in an httpOnly,
 * SameSite=Strict cookie scoped to /api (Secure over https), never readable by scripts. Writes made
 * with it must carry the CSRF header, which a cross-site form cannot send and a cross-site script
 * cannot send without a CORS preflight the gateway does not grant with credentials.
 */
export const SESSION_COOKIE = "kiln_session";
export const CSRF_HEADER = "x-kiln-csrf";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Refuses a write without `x-kiln-csrf: 1` (403): what a cookie session's every write needs. */
export function requireCsrfHeader(request: FastifyRequest): void {
  if (SAFE_METHODS.has(request.method) || request.headers[CSRF_HEADER] === "1") return;
  throw new HttpError(
    "permission_denied",
    `a console session's writes need the ${CSRF_HEADER}: 1 header; cross-site requests are refused`,
  );
}

/** The access token of the request's session cookie, if it has one (a write must pass the CSRF check). */
export function sessionTokenOf(request: FastifyRequest): string | undefined {
  const token = request.cookies[SESSION_COOKIE];
  if (!token) return undefined;
  if (looksLikeApiKey(token)) throw new HttpError("unauthenticated", "a session cookie holds an access token only");
  requireCsrfHeader(request);
  return token;
}

/** The cookie's attributes; `expires` is the access token's expiry (the session ends with it). */
export function sessionCookieOptions(request: FastifyRequest, expires?: Date): CookieSerializeOptions {
  return { httpOnly: true, sameSite: "strict", secure: request.protocol === "https", path: "/api", expires };
}
