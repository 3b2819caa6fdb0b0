/**
 * The OpenAPI security a route declares is what the gateway lets through: a route whose document
 * names only the access token refuses an API key before its body is read, and one that names only
 * API keys refuses a user's token, so the document and the behaviour cannot drift apart
 * (test/route-security.test.ts checks every route of the document both ways).
 */
import type { Principal } from "@kiln/kit/principal";
import { HttpError } from "../errors.js";

/** The security schemes of the document (gateway/src/openapi.ts SECURITY_SCHEMES) by the credential they carry. */
const SCHEMES_OF = { user: ["accessToken"], api_key: ["apiKeyBearer", "apiKeyHeader"] } as const;

type Security = readonly Record<string, readonly string[]>[] | undefined;

/** Throws `permission_denied` when the route's declared security does not take this principal's kind of credential. */
export function assertDeclaredCredential(security: Security, principal: Principal): void {
  if (security === undefined || security.length === 0) return;
  if (principal.type !== "user" && principal.type !== "api_key") return;
  const schemes: readonly string[] = SCHEMES_OF[principal.type];
  if (security.some((entry) => Object.keys(entry).some((name) => schemes.includes(name)))) return;
  throw new HttpError(
    "permission_denied",
    principal.type === "api_key"
      ? "this route takes a signed-in user's access token, not an API key"
      : "this route takes an API key, not a user's access token",
  );
}
