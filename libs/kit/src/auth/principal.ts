import { type ContextValues, createContextKey, createContextValues, type HandlerContext } from "@connectrpc/connect";
import { unauthenticated } from "../errors.js";

/**
 * Who is calling. Access tokens and API keys both become one of these, so code below the edge
 * does not care which credential was used.
 *
 * A `service` principal (one of the deployment's own processes acting for itself) acts for the
 * one organization it names, like an API key: a token minted for organization A reads and writes
 * nothing in B. Without `organizationId` it is the platform principal, which acts in no
 * organization at all: it may only make identity's platform calls (sign-up, tokens, the JWKS,
 * external users, API key verification), which the gateway and every service's key check need.
 */
export type Principal = { type: "user"; id: string } | ApiKeyPrincipal | ServicePrincipal;

/**
 * An API key: its organization, scopes and token-per-minute limit travel with it to every
 * service (docs/usage.md "Token-per-minute limits"), so the place runs start needs no call.
 */
export type ApiKeyPrincipal = {
  type: "api_key";
  id: string;
  organizationId: string;
  scopes: string[];
  tokensPerMinute?: number;
};

export type ServicePrincipal = { type: "service"; id: string; organizationId?: string };

/** The service `id` acting for itself in `organizationId` (and nowhere else). */
export function serviceFor(id: string, organizationId: string): ServicePrincipal {
  return { type: "service", id, organizationId };
}

/** Call context values making a call as the service `id` acting in `organizationId`. */
export function actingFor(id: string, organizationId: string, values: ContextValues = createContextValues()) {
  return values.set(kPrincipal, serviceFor(id, organizationId));
}

/**
 * True when the principal is bound to one organization (an API key, a service principal) and that
 * organization is not `organizationId`; a platform service principal is bound to none, so every
 * organization is outside it. Users are bound by their memberships, which identity decides.
 */
export function isOutside(principal: Principal, organizationId: string): boolean {
  if (principal.type === "user") return false;
  return principal.organizationId !== organizationId || organizationId === "";
}

/** The authenticated principal of an RPC (server side) or the one to forward (client side). */
export const kPrincipal = createContextKey<Principal | undefined>(undefined, { description: "principal" });

/** The principal an RPC handler serves (the auth interceptor set it); without one the call is unauthenticated. */
export function principalOf(ctx: Pick<HandlerContext, "values">): Principal {
  const principal = ctx.values.get(kPrincipal);
  if (!principal) throw unauthenticated("missing credentials");
  return principal;
}

/** A use case as RPC handlers call it: with the caller's principal and the request (or its input). */
export type PrincipalCall<Req, Res> = (principal: Principal, req: Req) => Promise<Res>;

/** A use case called with the input `inputOf` makes of the request. */
export const withInput =
  <Req, Input, Res>(inputOf: (req: Req) => Input, call: PrincipalCall<Input, Res>): PrincipalCall<Req, Res> =>
  (principal, req) =>
    call(principal, inputOf(req));

/** An RPC handler of a use case that takes the caller's principal and the request. */
export const withPrincipal =
  <Req, Res>(handle: PrincipalCall<Req, Res>) =>
  (req: Req, ctx: HandlerContext): Promise<Res> =>
    handle(principalOf(ctx), req);

/** Makes RPC handlers of use cases whose result `toAnswer` turns into the RPC's answer. */
export const answering =
  <T, Res>(toAnswer: (result: T) => Res) =>
  <Req>(call: PrincipalCall<Req, T>) =>
    withPrincipal(async (principal, req: Req) => toAnswer(await call(principal, req)));

/** The answer `{[key]: value}` of an RPC whose message has one field. */
export const answerField = <K extends string, V>(key: K, value: V) => ({ [key]: value }) as Record<K, V>;

/** Makes RPC handlers answering a use case's result as the field `key`, made by `toProto`. */
export const answeringOne = <K extends string, T, R>(key: K, toProto: (result: T) => R) =>
  answering((result: T) => answerField(key, toProto(result)));

/** Makes RPC handlers answering a use case's page as the list `key` (each item made by `toProto`) and its cursor. */
export const answeringPage = <K extends string, T, R>(key: K, toProto: (item: T) => R) =>
  answering((page: { items: T[]; nextCursor: string }) => ({
    ...answerField(key, page.items.map(toProto)),
    nextCursor: page.nextCursor,
  }));

/** The request id of the REST request an RPC serves, forwarded as x-request-id. */
export const kRequestId = createContextKey<string | undefined>(undefined, { description: "request id" });

/**
 * Cache key of a principal: stable, and never holds a secret. Who it is, not what it carries: a
 * key's token-per-minute limit is left out (its idempotency records, say, outlive a change of it).
 */
export function principalKey(p: Principal): string {
  if (p.type === "api_key") return `api_key:${p.id}:${p.organizationId}:${p.scopes.join(",")}`;
  return p.type === "service" ? `service:${p.id}:${p.organizationId ?? ""}` : `user:${p.id}`;
}

/** API keys look like `sk_<key id without its prefix>_<secret>` (api.md "Authentication"). */
export const API_KEY_PATTERN = /^sk_([0-9a-f]{32})_([0-9A-Za-z]{22,64})$/;

export function looksLikeApiKey(credential: string): boolean {
  return credential.startsWith("sk_");
}
