import { type CallOptions, createContextValues } from "@connectrpc/connect";
import { kPrincipal, kRequestId, type Principal } from "@kiln/kit/principal";
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from "@kiln/kit/rpc/idempotency";
import type { FastifyRequest } from "fastify";
import { HttpError } from "../errors.js";

/**
 * What a route handler reads from its request besides the schema-checked parts: the principal
 * authentication set, and the call options that carry it to a service. Routes import these from
 * here, below them; app.ts decorates every request with the two fields.
 */

declare module "fastify" {
  interface FastifyRequest {
    /** Set by authentication on every route that is not public. */
    principal: Principal | null;
    /** A service answered with the replay of an earlier request with the same Idempotency-Key. */
    idempotentReplayed: boolean;
    /** The W3C trace context of the run this request started, answered as `traceparent`. */
    runTraceparent: string;
  }
}

/** The authenticated principal of a request (routes that are not public always have one). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new HttpError("unauthenticated", "missing credentials");
  return request.principal;
}

/**
 * Call options that forward the request's principal, id and Idempotency-Key to a service; a
 * service that replays an earlier answer says so, and the reply then carries Idempotent-Replayed.
 */
export function rpcOptions(request: FastifyRequest, principal: Principal | null = request.principal): CallOptions {
  const values = createContextValues().set(kRequestId, request.id);
  if (principal) values.set(kPrincipal, principal);
  const key = request.headers["idempotency-key"];
  // The caller's W3C trace context goes to the service: a run joins the caller's trace.
  const { traceparent } = request.headers;
  const headers = {
    ...(typeof key === "string" && { [IDEMPOTENCY_KEY_HEADER]: key }),
    ...(typeof traceparent === "string" && { traceparent }),
  };
  return {
    contextValues: values,
    headers: Object.keys(headers).length > 0 ? headers : undefined,
    onHeader: (header) => {
      if (header.get(IDEMPOTENT_REPLAYED_HEADER) === "true") request.idempotentReplayed = true;
      request.runTraceparent = header.get("traceparent") ?? request.runTraceparent;
    },
  };
}

/**
 * The handler of a "get by id" route: calls the service with the route's `:id` (and the request's
 * call options) and answers the response through `view`.
 */
export function byId<R, V>(
  call: (input: { id: string }, options: CallOptions) => Promise<R>,
  view: (response: R) => V,
) {
  return async (request: FastifyRequest & { params: { id: string } }) =>
    view(await call({ id: request.params.id }, rpcOptions(request)));
}

/** Call options of a call that stores nothing (a preview, a check), so takes no Idempotency-Key. */
export function storelessRpcOptions(request: FastifyRequest): CallOptions {
  return { ...rpcOptions(request), headers: undefined };
}
