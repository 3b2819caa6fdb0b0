import type { CallOptions } from "@connectrpc/connect";
import type { FastifyReply, FastifyRequest } from "fastify";
import { rpcOptions } from "../http/request.js";
import { invalidValue, SCIM_MEDIA_TYPE } from "./scim-errors.js";

/** What the /scim/v2 routes share: their declaration, the token, the call options, the answer. */

/** What every /scim/v2 route is declared with: its own authentication (scim-routes.ts), out of the OpenAPI document. */
export const SCIM_ROUTE = { config: { public: true }, schema: { hide: true } } as const;

declare module "fastify" {
  interface FastifyRequest {
    /** The SCIM bearer token of a /scim/v2 request (identity checks it on every call). */
    scimToken: string;
  }
}

/** Call options of a SCIM call: the gateway acting for the platform, with the request's id. */
export const scimCall = (request: FastifyRequest): CallOptions => ({
  ...rpcOptions(request, null),
  headers: undefined,
});

/** A SCIM answer: the resource as application/scim+json. */
export const sendScim = (reply: FastifyReply, status: number, body: unknown) =>
  reply.code(status).type(SCIM_MEDIA_TYPE).send(JSON.stringify(body));

/** `startIndex` (1-based, default 1) and `count` (default and at most 200) of a list (RFC 7644 §3.4.2.4). */
export function pageQueryOf(query: Record<string, string | undefined>) {
  const int = (name: string, fallback: number) => {
    const v = query[name];
    if (v === undefined || v === "") return fallback;
    if (!/^-?\d{1,9}$/.test(v)) throw invalidValue(`${name} must be an integer`);
    return Number(v);
  };
  return { startIndex: Math.max(int("startIndex", 1), 1), count: Math.min(Math.max(int("count", 100), 0), 200) };
}
