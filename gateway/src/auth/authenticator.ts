import { type Client, createContextValues } from "@connectrpc/connect";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import { DomainError, unauthenticated } from "@kiln/kit/errors";
import { kRequestId, looksLikeApiKey, type Principal } from "@kiln/kit/principal";
import { domainErrorOf } from "@kiln/kit/rpc/errors";
import type { IdentityService } from "@kiln/proto/identity";
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeJwt,
  errors,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from "jose";
import { LRUCache } from "lru-cache";

export interface OidcOptions {
  issuer: string;
  audience: string;
  jwksUrl: string;
}

export interface AuthenticatorOptions {
  identity: Client<typeof IdentityService>;
  identityAuth: IdentityAuth;
  /** Accept tokens of the built-in issuer (its keys come from the identity service). */
  builtinIssuer: boolean;
  oidc?: OidcOptions;
  /** How long identity's positive answers about API keys are reused. */
  apiKeyCacheTtlMs: number;
}

export interface Authenticator {
  /** The principal a credential (access token or API key) stands for; throws `unauthenticated`. */
  authenticate(credential: string, requestId: string): Promise<Principal>;
  /** Forget cached answers for this API key id at once (after a revoke through this gateway). */
  forgetApiKey(keyId: string): void;
  /** The key changed through this gateway (its token-per-minute limit): its next use asks identity again. */
  refreshApiKey(keyId: string): void;
}

interface Verifier {
  verify(token: string): Promise<JWTPayload>;
}

// Verified tokens are reused until they expire: authentication is the hottest path of all.
const TOKEN_CACHE_MAX = 50_000;

function builtinVerifier(identity: Client<typeof IdentityService>): Verifier {
  let current: Promise<{ keys: JWTVerifyGetKey; issuer: string; audience: string }> | undefined;
  let fetchedAt = 0;
  const load = () => {
    fetchedAt = Date.now();
    current = identity.getJwks({}).then((r) => ({
      keys: createLocalJWKSet(JSON.parse(r.jwks?.json ?? "{}") as JSONWebKeySet),
      issuer: r.issuer,
      audience: r.audience,
    }));
    current.catch(() => {
      current = undefined;
    });
    return current;
  };
  const verifyWith = async (token: string, set: Awaited<ReturnType<typeof load>>) =>
    (
      await jwtVerify(token, set.keys, {
        issuer: set.issuer,
        audience: set.audience,
        algorithms: ["ES256"],
        typ: "at+jwt",
        clockTolerance: 5,
        requiredClaims: ["sub", "exp"],
      })
    ).payload;
  return {
    async verify(token) {
      const set = await (current ?? load());
      try {
        return await verifyWith(token, set);
      } catch (e) {
        // A key the gateway has not seen yet (rotation): fetch the set again, at most every 30 s.
        if (e instanceof errors.JWKSNoMatchingKey && Date.now() - fetchedAt > 30_000) {
          return verifyWith(token, await load());
        }
        throw e;
      }
    },
  };
}

/**
 * The issuer's key set could not be fetched (network failure, timeout, a non-200 or non-JWKS
 * answer): a dependency is down (503, safe to retry), not a bad token (401).
 */
function isKeySetOutage(e: unknown): boolean {
  if (!(e instanceof errors.JOSEError)) return true;
  return e instanceof errors.JWKSTimeout || e instanceof errors.JWKSInvalid || e.code === errors.JOSEError.code;
}

function oidcVerifier(options: OidcOptions): Verifier {
  const remote = createRemoteJWKSet(new URL(options.jwksUrl));
  const keys: JWTVerifyGetKey = async (header, token) => {
    try {
      return await remote(header, token);
    } catch (e) {
      if (isKeySetOutage(e))
        throw new DomainError("unavailable", "the OIDC issuer's keys cannot be fetched; retry later");
      throw e;
    }
  };
  return {
    async verify(token) {
      const { payload } = await jwtVerify(token, keys, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: ["RS256", "ES256", "PS256", "EdDSA"],
        clockTolerance: 5,
        requiredClaims: ["sub", "exp"],
      });
      return payload;
    },
  };
}

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const builtin = options.builtinIssuer ? builtinVerifier(options.identity) : undefined;
  const oidc = options.oidc ? oidcVerifier(options.oidc) : undefined;
  const tokens = new LRUCache<string, { principal: Principal; expMs: number }>({ max: TOKEN_CACHE_MAX });
  const externalUsers = new LRUCache<string, string>({ max: TOKEN_CACHE_MAX, ttl: 10 * 60_000 });
  // Revoked here: refused until every cached "valid" answer about the key has expired too.
  const forgotten = new LRUCache<string, number>({ max: 10_000, ttl: Math.max(60_000, 2 * options.apiKeyCacheTtlMs) });
  let builtinIssuer: string | undefined;

  async function userOfExternal(payload: JWTPayload, requestId: string): Promise<string> {
    const key = `${payload.iss} ${payload.sub}`;
    const hit = externalUsers.get(key);
    if (hit) return hit;
    try {
      const { user } = await options.identity.resolveExternalUser(
        {
          issuer: payload.iss ?? "",
          subject: payload.sub ?? "",
          email: typeof payload.email === "string" ? payload.email : "",
          fullName: typeof payload.name === "string" ? payload.name : "",
          emailVerified: payload.email_verified === true,
        },
        { contextValues: createContextValues().set(kRequestId, requestId) },
      );
      if (!user) throw new Error("identity returned no user");
      externalUsers.set(key, user.id);
      return user.id;
    } catch (e) {
      throw domainErrorOf(e) ?? e;
    }
  }

  async function verifyAccessToken(token: string, requestId: string): Promise<{ principal: Principal; exp?: number }> {
    let iss: string | undefined;
    try {
      iss = decodeJwt(token).iss;
    } catch {
      throw unauthenticated("malformed access token");
    }
    try {
      if (oidc && iss === options.oidc?.issuer) {
        const payload = await oidc.verify(token);
        return { principal: { type: "user", id: await userOfExternal(payload, requestId) }, exp: payload.exp };
      }
      if (builtin && (builtinIssuer === undefined || iss === builtinIssuer)) {
        const payload = await builtin.verify(token);
        builtinIssuer = payload.iss;
        return { principal: { type: "user", id: payload.sub ?? "" }, exp: payload.exp };
      }
    } catch (e) {
      if (e instanceof errors.JWTExpired) throw unauthenticated("the access token has expired");
      if (e instanceof errors.JOSEError) throw unauthenticated("invalid access token");
      throw e;
    }
    throw unauthenticated("access tokens of this issuer are not accepted");
  }

  return {
    async authenticate(credential, requestId) {
      // An organization's SCIM token provisions users at /scim/v2 and is no credential anywhere else.
      if (credential.startsWith("scim_")) throw unauthenticated("a SCIM token is accepted only at /scim/v2");
      if (looksLikeApiKey(credential)) {
        const principal = await options.identityAuth.verifyApiKey(credential, requestId);
        if (forgotten.has(principal.id)) throw unauthenticated("invalid API key");
        return principal;
      }
      const hit = tokens.get(credential);
      if (hit && hit.expMs > Date.now()) return hit.principal;
      const verified = await verifyAccessToken(credential, requestId);
      tokens.set(credential, { principal: verified.principal, expMs: (verified.exp ?? 0) * 1000 });
      return verified.principal;
    },
    forgetApiKey(keyId) {
      forgotten.set(keyId, Date.now());
    },
    refreshApiKey(keyId) {
      options.identityAuth.forgetApiKey?.(keyId);
    },
  };
}
