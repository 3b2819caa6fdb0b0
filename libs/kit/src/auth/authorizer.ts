import { createHash } from "node:crypto";
import { type Client, createContextValues } from "@connectrpc/connect";
import type { AuthorizeResponse, IdentityService } from "@kiln/proto/identity";
import { LRUCache } from "lru-cache";
import { createCallCache } from "../call-cache.js";
import { DomainError, notFound } from "../errors.js";
import { remote } from "../rpc/connect-errors.js";
import { isOutside, kPrincipal, kRequestId, type Principal, principalKey } from "./principal.js";

export interface AuthorizeInput {
  organizationId: string;
  /** The organization must have aiEnabled and a user member the ai_platform permission. */
  requireAi: boolean;
  /** Scope an API key must hold, and a user's role must grant (docs/security.md "Roles"). */
  scope?: string;
}

/** Authentication and authorization as the identity service decides them, cached briefly. */
export interface IdentityAuth {
  /** Throws `unauthenticated` for an unknown, malformed or revoked key. */
  verifyApiKey(key: string, requestId?: string): Promise<Principal>;
  /** Throws `not_found` (no such organization, or not a member) or `permission_denied`. */
  authorize(principal: Principal, input: AuthorizeInput, requestId?: string): Promise<AuthorizeResponse>;
  /**
   * The key changed through this process (its token-per-minute limit): the answers cached about it
   * here are asked again on their next use. Elsewhere they live out their time to live.
   */
  forgetApiKey?(keyId: string): void;
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
  const keys = createCallCache<{ principal: Principal; asked: number }>({ max: 10_000, ttl });
  // The keys changed here, by the tick of the change: an answer asked before it is asked again.
  const changed = new LRUCache<string, number>({ max: 10_000, ttl });
  let clock = 0;
  // lru-cache allocates its arrays up front (50,000 entries held 1.4 MB in every service, five times
  // over in the embedded process); 10,000 decisions live for the TTL cover 2,000 new
  // principal-organization-scope pairs a second before one is asked twice.
  const decisions = createCallCache<AuthorizeResponse>({ max: 10_000, ttl });
  return {
    verifyApiKey(key, requestId) {
      // Cached by a digest: the secret itself is not kept in the cache's keys.
      const digest = createHash("sha256").update(key).digest("base64url");
      const ask = () =>
        keys.get(digest, async () => {
          const asked = ++clock;
          const res = await identity.verifyApiKey(
            { key },
            { contextValues: createContextValues().set(kRequestId, requestId) },
          );
          if (!res.principal) throw new Error("identity returned no principal");
          return { principal: principalFromProto(res.principal), asked };
        });
      return remote(
        ask().then((hit) => {
          if ((changed.get(hit.principal.id) ?? 0) < hit.asked) return hit.principal;
          keys.forget(digest);
          return ask().then((again) => again.principal);
        }),
      );
    },
    forgetApiKey(keyId) {
      changed.set(keyId, ++clock);
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
  tokensPerMinute?: number;
}): Principal {
  switch (p.type) {
    case "api_key":
      return {
        type: "api_key",
        id: p.id,
        organizationId: p.organizationId,
        scopes: [...p.scopes],
        ...(p.tokensPerMinute !== undefined && { tokensPerMinute: p.tokensPerMinute }),
      };
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
