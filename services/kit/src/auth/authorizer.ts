import { createHash } from "node:crypto";
import { type Client, createContextValues } from "@connectrpc/connect";
import type { AuthorizeResponse, IdentityService } from "@kiln/proto/identity";
import { createCallCache } from "../call-cache.js";
import { DomainError, notFound } from "../errors.js";
import { remote } from "../rpc/connect-errors.js";
import { isOutside, kPrincipal, kRequestId, type Principal, principalKey } from "./principal.js";

export interface AuthorizeInput {
  organizationId: string;
  /** The organization must have aiEnabled and a user member the ai_platform permission. */
  requireAi: boolean;
  /** Scope an API key must hold; users act with their membership. */
  scope?: string;
}

/** Authentication and authorization as the identity service decides them, cached briefly. */
export interface IdentityAuth {
  /** Throws `unauthenticated` for an unknown, malformed or revoked key. */
  verifyApiKey(key: string, requestId?: string): Promise<Principal>;
  /** Throws `not_found` (no such organization, or not a member) or `permission_denied`. */
  authorize(principal: Principal, input: AuthorizeInput, requestId?: string): Promise<AuthorizeResponse>;
}

export interface RemoteIdentityAuthOptions {
  /**
   * How long a positive answer is reused. Revoking a key or a membership takes effect within
   * this time everywhere; negative answers are never cached.
   */
  ttlMs?: number;
}

/** IdentityAuth over the identity service's RPC, for the gateway and the other services. */
export function createRemoteIdentityAuth(
  identity: Client<typeof IdentityService>,
  options: RemoteIdentityAuthOptions = {},
): IdentityAuth {
  const ttl = options.ttlMs ?? 5_000;
  // One identity call per key at a time (the herd at each expiry was a third of identity's CPU
  // at 256 connections); refusals are never cached.
  const keys = createCallCache<Principal>({ max: 10_000, ttl });
  // lru-cache allocates its arrays up front (50,000 entries held 1.4 MB in every service, five times
  // over in the embedded process); 10,000 decisions live for the TTL cover 2,000 new
  // principal-organization-scope pairs a second before one is asked twice.
  const decisions = createCallCache<AuthorizeResponse>({ max: 10_000, ttl });
  return {
    verifyApiKey(key, requestId) {
      // Cached by a digest: the secret itself is not kept in the cache's keys.
      const digest = createHash("sha256").update(key).digest("base64url");
      return remote(
        keys.get(digest, async () => {
          const res = await identity.verifyApiKey(
            { key },
            { contextValues: createContextValues().set(kRequestId, requestId) },
          );
          if (!res.principal) throw new Error("identity returned no principal");
          return principalFromProto(res.principal);
        }),
      );
    },
    authorize(principal, input, requestId) {
      const cacheKey = `${principalKey(principal)}|${input.organizationId}|${input.requireAi}|${input.scope ?? ""}`;
      return remote(
        decisions.get(cacheKey, () =>
          identity.authorize(
            { organizationId: input.organizationId, requireAi: input.requireAi, scope: input.scope ?? "" },
            { contextValues: createContextValues().set(kPrincipal, principal).set(kRequestId, requestId) },
          ),
        ),
      );
    },
  };
}

export interface ResourceAccess {
  organizationId: string;
  /** The API-key scope the call needs. */
  scope: string;
  /** How the resource is named when the caller cannot see it: "<what> not found". */
  what: string;
  /** Default true: the organization must have aiEnabled (and a user the ai_platform permission). */
  requireAi?: boolean;
  requestId?: string;
}

/**
 * Authorization on a resource of an organization (a call addressed by id): a principal bound to
 * one organization (an API key, a service principal) sees only that organization's resources, and
 * a resource the caller cannot see is reported as not existing (404), where identity would say
 * "another organization" (403) for a create or list (api.md "Organization scoping"). The one
 * place every service makes this check.
 */
export async function authorizeOnResource(
  identityAuth: IdentityAuth,
  principal: Principal,
  access: ResourceAccess,
): Promise<AuthorizeResponse> {
  const { organizationId, scope, what, requireAi = true, requestId } = access;
  if (isOutside(principal, organizationId)) throw notFound(what);
  try {
    return await identityAuth.authorize(principal, { organizationId, requireAi, scope }, requestId);
  } catch (e) {
    if (e instanceof DomainError && e.kind === "not_found") throw notFound(what);
    throw e;
  }
}

export function principalFromProto(p: {
  type: string;
  id: string;
  organizationId: string;
  scopes: string[];
}): Principal {
  switch (p.type) {
    case "api_key":
      return { type: "api_key", id: p.id, organizationId: p.organizationId, scopes: [...p.scopes] };
    case "user":
      return { type: "user", id: p.id };
    case "service":
      return p.organizationId === ""
        ? { type: "service", id: p.id }
        : { type: "service", id: p.id, organizationId: p.organizationId };
    default:
      throw new Error(`unknown principal type ${p.type}`);
  }
}
