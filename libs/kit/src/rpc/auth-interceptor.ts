import type { Interceptor } from "@connectrpc/connect";
import type { InternalTokens } from "../auth/internal-token.js";
import { kPrincipal, kRequestId, looksLikeApiKey, type Principal } from "../auth/principal.js";
import { DomainError, unauthenticated } from "../errors.js";
import { toConnectError } from "./connect-errors.js";

export interface AuthInterceptorOptions {
  tokens: InternalTokens;
  /** Verifies an API key presented directly by an internal caller; throws `unauthenticated`. */
  verifyApiKey: (key: string) => Promise<Principal>;
  /** RPC paths served without credentials, e.g. "/grpc.health.v1.Health/Check". */
  publicPaths?: ReadonlySet<string>;
}

/** The credential of a request: `Authorization: Bearer <x>` or `X-API-Key: <x>`. */
export function credentialOf(header: (name: "authorization" | "x-api-key") => string | undefined): string | undefined {
  const auth = header("authorization");
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m?.[1];
  }
  return header("x-api-key")?.trim() || undefined;
}

/**
 * Server side: services do not trust the network. Every call must carry an internal token (signed
 * by the gateway or a peer service) or an API key; the principal goes into the call's context.
 */
export function createAuthInterceptor(options: AuthInterceptorOptions): Interceptor {
  return (next) => async (req) => {
    const path = new URL(req.url).pathname;
    const requestId = req.header.get("x-request-id");
    if (requestId) req.contextValues.set(kRequestId, requestId);
    if (options.publicPaths?.has(path)) return next(req);
    const credential = credentialOf((name) => req.header.get(name) ?? undefined);
    try {
      if (!credential) throw unauthenticated("missing credentials");
      const principal = looksLikeApiKey(credential)
        ? await options.verifyApiKey(credential)
        : await options.tokens.verify(credential);
      req.contextValues.set(kPrincipal, principal);
    } catch (e) {
      // Anything else (a store that cannot be read, say) is no verdict on the credential: it goes
      // on to the error interceptor as an internal error rather than a misleading 401.
      if (e instanceof DomainError) throw toConnectError(e);
      throw e;
    }
    return next(req);
  };
}

/**
 * Client side: forwards the principal of the call (call-level `contextValues`), or acts as
 * `self` when there is none, as a short-lived internal token; forwards the request id too.
 */
export function createForwardInterceptor(tokens: InternalTokens, self: Principal): Interceptor {
  return (next) => async (req) => {
    const principal = req.contextValues.get(kPrincipal) ?? self;
    req.header.set("authorization", `Bearer ${await tokens.sign(principal)}`);
    const requestId = req.contextValues.get(kRequestId);
    if (requestId) req.header.set("x-request-id", requestId);
    return next(req);
  };
}
