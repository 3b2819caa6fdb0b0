import { jwtVerify, SignJWT } from "jose";
import { LRUCache } from "lru-cache";
import { unauthenticated } from "../errors.js";
import { type Principal, principalKey } from "./principal.js";

const ISSUER = "kiln-internal";
const AUDIENCE = "kiln-services";

export interface InternalTokens {
  /** A short-lived token asserting `principal`; reused while it has more than half its life left. */
  sign(principal: Principal): Promise<string>;
  /** The principal a token asserts; throws `unauthenticated` for a forged, expired or malformed token. */
  verify(token: string): Promise<Principal>;
}

interface Claims {
  typ: Principal["type"];
  /** The organization an api_key belongs to, or the one a service acts for (none: the platform). */
  org?: string;
  scp?: string[];
  /** An api_key's token-per-minute limit, when it has one. */
  tpm?: number;
}

/**
 * Tokens the gateway (and any service calling another) signs to forward an authenticated principal.
 * Services do not trust the network: every RPC carries one of these or an API key. HS256 with a
 * secret shared by the deployment's own processes; lifetime `ttlSeconds` (default 60).
 */
export function createInternalTokens(secret: string, options: { ttlSeconds?: number } = {}): InternalTokens {
  if (secret.length < 32) throw new Error("internal auth secret must be at least 32 characters");
  const key = new TextEncoder().encode(secret);
  const ttlSeconds = options.ttlSeconds ?? 60;
  const signed = new LRUCache<string, { token: string; renewAt: number }>({ max: 10_000 });
  const verified = new LRUCache<string, { principal: Principal; expMs: number }>({ max: 10_000 });

  return {
    async sign(principal) {
      // What the token asserts: a key whose limit changed gets a new token, not the one cached for its old limit.
      const k =
        principal.type === "api_key"
          ? `${principalKey(principal)}:${principal.tokensPerMinute ?? ""}`
          : principalKey(principal);
      const hit = signed.get(k);
      if (hit && hit.renewAt > Date.now()) return hit.token;
      const claims: Claims = { typ: principal.type };
      if (principal.type === "api_key") {
        claims.org = principal.organizationId;
        claims.scp = principal.scopes;
        if (principal.tokensPerMinute !== undefined) claims.tpm = principal.tokensPerMinute;
      } else if (principal.type === "service" && principal.organizationId !== undefined) {
        claims.org = principal.organizationId;
      }
      const nowSeconds = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ ...claims })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(principal.id)
        .setIssuedAt(nowSeconds)
        .setExpirationTime(nowSeconds + ttlSeconds)
        .sign(key);
      signed.set(k, { token, renewAt: Date.now() + (ttlSeconds * 1000) / 2 });
      return token;
    },
    async verify(token) {
      const hit = verified.get(token);
      if (hit && hit.expMs > Date.now()) return hit.principal;
      try {
        const { payload } = await jwtVerify<Claims>(token, key, {
          issuer: ISSUER,
          audience: AUDIENCE,
          algorithms: ["HS256"],
          requiredClaims: ["sub", "exp"],
        });
        const principal = principalFromClaims(payload.sub ?? "", payload);
        verified.set(token, { principal, expMs: (payload.exp ?? 0) * 1000 });
        return principal;
      } catch {
        throw unauthenticated("invalid internal token");
      }
    },
  };
}

function principalFromClaims(sub: string, claims: Claims): Principal {
  switch (claims.typ) {
    case "user":
      return { type: "user", id: sub };
    case "service":
      if (claims.org === undefined) return { type: "service", id: sub };
      // An empty or non-string organization would read as "acts for none" or worse: refused.
      if (typeof claims.org !== "string" || claims.org === "") throw new Error("service organization malformed");
      return { type: "service", id: sub, organizationId: claims.org };
    case "api_key":
      if (typeof claims.org !== "string" || !Array.isArray(claims.scp)) throw new Error("api_key claims incomplete");
      if (claims.tpm !== undefined && !Number.isSafeInteger(claims.tpm)) throw new Error("api_key limit malformed");
      return {
        type: "api_key",
        id: sub,
        organizationId: claims.org,
        scopes: claims.scp,
        ...(claims.tpm !== undefined && { tokensPerMinute: claims.tpm }),
      };
    default:
      throw new Error("unknown principal type");
  }
}
