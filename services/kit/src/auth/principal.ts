import { createContextKey } from "@connectrpc/connect";

/**
 * Who is calling. Access tokens and API keys both become one of these, so code below the edge
 * does not care which credential was used.
 */
export type Principal =
  | { type: "user"; id: string }
  | { type: "api_key"; id: string; organizationId: string; scopes: string[] }
  | { type: "service"; id: string };

/** The authenticated principal of an RPC (server side) or the one to forward (client side). */
export const kPrincipal = createContextKey<Principal | undefined>(undefined, { description: "principal" });

/** The request id of the REST request an RPC serves, forwarded as x-request-id. */
export const kRequestId = createContextKey<string | undefined>(undefined, { description: "request id" });

/** Cache key of a principal: stable, and never holds a secret. */
export function principalKey(p: Principal): string {
  return p.type === "api_key" ? `api_key:${p.id}:${p.organizationId}:${p.scopes.join(",")}` : `${p.type}:${p.id}`;
}

/** API keys look like `sk_<key id without its prefix>_<secret>` (api.md "Authentication"). */
export const API_KEY_PATTERN = /^sk_([0-9a-f]{32})_([0-9A-Za-z]{22,64})$/;

export function looksLikeApiKey(credential: string): boolean {
  return credential.startsWith("sk_");
}

/** The scopes an API key may hold (api.md "Authentication"): one vocabulary for every process. */
export const API_KEY_SCOPES = [
  "prompts:read",
  "prompts:write",
  "tools:read",
  "tools:write",
  "skills:read",
  "skills:write",
  "agents:read",
  "agents:write",
  "runs:read",
  "runs:write",
  "evaluations:read",
  "evaluations:write",
  "labels:write",
  "webhooks:read",
  "webhooks:write",
] as const;
