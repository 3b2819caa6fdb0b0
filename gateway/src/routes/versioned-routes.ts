import type { CallOptions } from "@connectrpc/connect";
import type { VersionDiff } from "@kiln/proto/catalog";
import type { FastifyReply, FastifyRequest } from "fastify";
import Type, { type Static, type TSchema } from "typebox";
import type { GatewayApp } from "../http/gateway-app.js";
import { listPage } from "../http/list-page.js";
import { operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { errorResponses, List, ref, type Stability } from "../schemas.js";
import {
  DiffQuerystring,
  IdParams,
  ListQuerystring,
  listRequest,
  VersionIdQuerystring,
  VersionParams,
} from "./catalog-requests.js";
import { VersionDiffView, versionDiffView } from "./catalog-views.js";

/**
 * One route factory for the versioned catalog resources (prompts, tools, skills, agents). A family
 * is named ("Prompt": the path /api/prompts, the tag prompts, operation ids listPrompts,
 * createPrompt…, the document's schemas Prompt and PromptVersion) and declares the views of its
 * resource and version and the RPC call behind each route; the factory registers list, create, get,
 * update, create version, publish and diff with the statuses every family shares, and takes the
 * resource out of the catalog's answers (`{ prompt }`, `{ prompts, nextCursor }`, `{ version }`,
 * `{ diff }`). Routes of one family only (a skill's composition, an agent's workflow and rollback)
 * stay in that family's module.
 */

/** A write route of a family: its summary, body schema, whether it may answer 409, and the call behind it. */
export interface VersionedWrite<B extends TSchema, A, R> {
  summary: string;
  body: B;
  /** The route answers 409 too (besides 400, 401, 403 and 404). */
  conflicts?: boolean;
  call(args: A, options: CallOptions): Promise<R>;
}

/** What a create passes to its call: the checked body and the request. */
export type CreateArgs<B extends TSchema> = { body: Static<B>; request: FastifyRequest };
/** What a write on one resource (`:id`) passes to its call: the id and the checked body. */
export type ByIdArgs<B extends TSchema> = { id: string; body: Static<B> };

/**
 * A family's create or write on `:id` with a body of its own: the call's `body` is typed by the
 * body's schema (a family holds its writes whatever their bodies; each is checked here).
 */
export const createWrite = <B extends TSchema, R>(write: VersionedWrite<B, CreateArgs<B>, R>) => write;
export const byIdWrite = <B extends TSchema, R>(write: VersionedWrite<B, ByIdArgs<B>, R>) => write;
/** A write of any body (`call` is a method, so a write typed by its own body fits). */
type AnyWrite<A, R> = VersionedWrite<TSchema, A, R>;

/** The field of the catalog's answers that carries a resource of the family `N` ("Prompt": `prompt`). */
type Key<N extends string> = Uncapitalize<N>;
/** An answer of the catalog that carries the resource `M` of the family `N` (e.g. `{ prompt?: Prompt }`). */
type Answer<N extends string, M> = { [K in Key<N>]?: M };
/** A page of the list of the family `N` (e.g. `{ prompts: Prompt[] }`, with `nextCursor`). */
type Page<N extends string, M> = { [K in `${Key<N>}s`]: M[] };

/** The schema of the document's component `id`. */
const component = (id: string) => Type.Unsafe<unknown>(Type.Ref(id));

/** A family named `N` (e.g. "Prompt"), of resources `M` with versions `VM`: its views and the call behind each route. */
export interface VersionedFamily<N extends string, M, VM> {
  /** The resource's view and a version's view. */
  view(resource: M | undefined): unknown;
  versionView(version: VM | undefined): unknown;
  /** A list page; `query` is the request's query, checked by `listQuerystring` when the family has one. */
  list(
    request: ReturnType<typeof listRequest>,
    options: CallOptions,
    query: Record<string, string | undefined>,
  ): Promise<Page<N, M> & { nextCursor: string }>;
  /** The list's query (default: ListQuerystring), for a family whose list takes filters of its own. */
  listQuerystring?: TSchema;
  /** Routes of the family registered after the list, before create (a static path under the list's). */
  afterList?(app: GatewayApp): void;
  create: AnyWrite<CreateArgs<TSchema>, Answer<N, M>>;
  get: {
    summary: string;
    /** Default: `?versionId=`. */
    querystring?: TSchema;
    stability?: Stability;
    /** `query`: the request's query, checked by `querystring`. */
    call(
      args: { id: string; versionId: string },
      options: CallOptions,
      query: Record<string, string | undefined>,
    ): Promise<Answer<N, M>>;
  };
  update: AnyWrite<ByIdArgs<TSchema>, Answer<N, M>>;
  createVersion: AnyWrite<ByIdArgs<TSchema>, { version?: VM }>;
  /** Routes of the family registered after create version, before publish (their place in the document). */
  afterCreateVersion?(app: GatewayApp): void;
  publish?: AnyWrite<ByIdArgs<TSchema>, Answer<N, M>>;
  diff?(
    args: { id: string; versionId: string; againstVersionId: string },
    options: CallOptions,
  ): Promise<{ diff?: VersionDiff }>;
}

const errors = (conflicts?: boolean) =>
  conflicts ? errorResponses(400, 401, 403, 404, 409) : errorResponses(400, 401, 403, 404);

/** Registers a versioned family's shared routes. */
export function registerVersionedRoutes<N extends string, M, VM>(
  app: GatewayApp,
  name: N,
  family: VersionedFamily<N, M, VM>,
): void {
  const { get, create } = family;
  const key = (name.charAt(0).toLowerCase() + name.slice(1)) as Key<N>;
  const view = component(name);
  const answer = (r: Answer<N, M>) => family.view(r[key]);
  const tag = `${name.toLowerCase()}s`;
  const path = `/api/${tag}`;
  const byId = `${path}/:id`;
  const op = operations({ tags: [tag], stability: "beta" });

  app.get(
    path,
    op(`list${name}s`, `List an organization's ${tag}, newest first`, {
      querystring: family.listQuerystring ?? ListQuerystring,
      response: { 200: List(view), ...errors() },
    }),
    async (request) => {
      const query = request.query as Record<string, string | undefined>;
      const r = await family.list(listRequest(request, query), rpcOptions(request), query);
      const page: Page<N, M> = r;
      return listPage(page[`${key}s` as const], family.view, r.nextCursor);
    },
  );

  family.afterList?.(app);

  app.post(
    path,
    op(`create${name}`, create.summary, {
      body: create.body,
      response: { 201: view, ...errors(create.conflicts) },
    }),
    async (request, reply) => {
      const r = await create.call({ body: request.body, request }, rpcOptions(request));
      return reply.code(201).send(answer(r));
    },
  );

  app.get(
    byId,
    operations({ tags: [tag], stability: get.stability ?? "beta" })(`get${name}`, get.summary, {
      params: IdParams,
      querystring: get.querystring ?? VersionIdQuerystring,
      response: { 200: view, ...errors() },
    }),
    async (request) => {
      const query = request.query as Record<string, string | undefined>;
      const args = { id: request.params.id, versionId: query.versionId ?? "" };
      return answer(await get.call(args, rpcOptions(request), query));
    },
  );

  /** A write on `:id`: `method` at `url`, answered with `status` and the `schema` of what `shown` makes of the call's answer. */
  const writeById = <T>(
    method: "PATCH" | "POST",
    url: string,
    operationId: string,
    write: AnyWrite<ByIdArgs<TSchema>, T>,
    shown: { status: 200 | 201; schema: TSchema; view(response: T): unknown },
  ) =>
    app.route({
      method,
      url,
      ...op(operationId, write.summary, {
        params: IdParams,
        body: write.body,
        response: { [shown.status]: shown.schema, ...errors(write.conflicts) },
      }),
      handler: async (request: FastifyRequest<{ Params: Static<typeof IdParams> }>, reply: FastifyReply) => {
        const args = { id: request.params.id, body: request.body };
        return reply.code(shown.status).send(shown.view(await write.call(args, rpcOptions(request))));
      },
    });

  const resource = { status: 200, schema: view, view: answer } as const;
  const version = {
    status: 201,
    schema: component(`${name}Version`),
    view: (r: { version?: VM }) => family.versionView(r.version),
  } as const;
  writeById("PATCH", byId, `update${name}`, family.update, resource);
  writeById("POST", `${byId}/versions`, `create${name}Version`, family.createVersion, version);
  family.afterCreateVersion?.(app);
  const { publish } = family;
  if (publish) writeById("POST", `${byId}/publish`, `publish${name}Version`, { ...publish, conflicts: true }, resource);

  const { diff } = family;
  if (diff) {
    app.get(
      `${byId}/versions/:versionId/diff`,
      op(
        `diff${name}Versions`,
        `The changes from ?against= (default: the version before) to this ${name.toLowerCase()} version`,
        {
          params: VersionParams,
          querystring: DiffQuerystring,
          response: { 200: ref(VersionDiffView), ...errors() },
        },
      ),
      async (request) => {
        const { id, versionId } = request.params;
        const againstVersionId = request.query.against ?? "";
        return versionDiffView((await diff({ id, versionId, againstVersionId }, rpcOptions(request))).diff);
      },
    );
  }
}
