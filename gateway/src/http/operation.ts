import type { FastifyContextConfig, FastifySchema } from "fastify";
import type { TSchema } from "typebox";
import { errorResponses, IdParams, List, ref, type Stability } from "../schemas.js";

/** What the routes of one module share in their declaration: OpenAPI tags, stability, security. */
export interface OperationGroup {
  tags: string[];
  stability: Stability;
  /** Served without credentials (then `security: []` in the document). */
  public?: boolean;
  /** The OpenAPI security of every route of the group, when not the document's default. */
  security?: Record<string, string[]>[];
}

/**
 * The route options of a group's operation: `config` (stability, public) and a schema of the group's
 * tags and security, the operation's id and summary, and the rest (params, body, response…).
 */
export function operation<const S extends FastifySchema>(
  group: OperationGroup,
  operationId: string,
  summary: string,
  schema: S,
) {
  const security = group.public ? { security: [] } : group.security && { security: group.security };
  const config: FastifyContextConfig = group.public
    ? { public: true, stability: group.stability }
    : { stability: group.stability };
  return {
    config,
    schema: { tags: group.tags, operationId, summary, ...security, ...schema },
  };
}

/** The declaring function of one group: `op(operationId, summary, schema)`. */
export const operations =
  (group: OperationGroup) =>
  <const S extends FastifySchema>(operationId: string, summary: string, schema: S) =>
    operation(group, operationId, summary, schema);

/** `response` of a route that answers 200 with `view` (a named schema), else one of the error statuses. */
export function answers<S extends TSchema>(view: S, ...errors: number[]) {
  return { 200: ref(view), ...errorResponses(...errors) };
}

/** `response` of a list route: `{ data, nextCursor }` of `view` (a named schema), else one of the error statuses. */
export function listAnswers<S extends TSchema>(view: S, ...errors: number[]) {
  return { 200: List(ref(view)), ...errorResponses(...errors) };
}

/**
 * The schema of a route that lists, a page at a time, what belongs to its `:id` (its handler:
 * `pageById`): the id, the page query and `{ data, nextCursor }` of `view`.
 */
export function pageByIdSchema<S extends TSchema, Q extends TSchema>(view: S, querystring: Q) {
  return { params: IdParams, querystring, response: listAnswers(view, 400, 401, 403, 404) };
}

/** The security of routes for signed-in users only: an access token, not an API key. */
export const ACCESS_TOKEN_ONLY = [{ accessToken: [] }];
