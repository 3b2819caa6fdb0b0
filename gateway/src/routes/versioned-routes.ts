import type { CallOptions } from "@connectrpc/connect";
import type { VersionDiff } from "@kiln/proto/catalog";
import type { FastifyRequest } from "fastify";
import type { Static, TSchema } from "typebox";
import type { GatewayApp } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { errorResponses, List, ref, type Stability } from "../schemas.js";
import { DiffQuerystring, IdParams, ListQuerystring, listRequest, VersionParams } from "./catalog-requests.js";
import { VersionDiffView, versionDiffView } from "./catalog-views.js";

/**
 * One route factory for the versioned catalog resources (prompts, tools, skills, agents). A family
 * declares its path, its schemas and the RPC call (with the conversion to its view) behind each
 * route; the factory registers list, create, get, update, create version, publish and diff with the
 * statuses, operation ids and tags every family shares. Routes of one family only (a skill's
 * composition, an agent's workflow and rollback) stay in that family's module.
 */

/** A write route of a family: its summary, body schema, extra statuses and the call behind it. */
export interface VersionedWrite<B extends TSchema, A> {
  summary: string;
  body: B;
  /** The statuses the route answers besides 400, 401, 403 and 404 (e.g. 409). */
  conflicts?: boolean;
  call(args: A, options: CallOptions): Promise<unknown>;
}

export interface VersionedFamily<C extends TSchema, U extends TSchema, V extends TSchema, P extends TSchema> {
  /** The collection path, e.g. "/api/prompts". */
  path: string;
  /** The OpenAPI tag and the plural used in summaries, e.g. "prompts". */
  tag: string;
  /** The singular in operation ids, e.g. "Prompt": listPrompts, createPrompt, diffPromptVersions. */
  name: string;
  /** The schemas (each with an $id) of the resource and of one version. */
  view: TSchema;
  versionView: TSchema;
  list(request: ReturnType<typeof listRequest>, options: CallOptions): Promise<{ data: unknown[]; nextCursor: string }>;
  create: VersionedWrite<C, { body: Static<C>; request: FastifyRequest }>;
  get: {
    summary: string;
    querystring: TSchema;
    stability?: Stability;
    call(args: { id: string; versionId: string }, options: CallOptions): Promise<unknown>;
  };
  update: VersionedWrite<U, { id: string; body: Static<U> }>;
  createVersion: VersionedWrite<V, { id: string; body: Static<V> }>;
  /** Routes of the family registered after create version, before publish (their place in the document). */
  afterCreateVersion?(app: GatewayApp): void;
  publish?: VersionedWrite<P, { id: string; body: Static<P> }>;
  diff?(
    args: { id: string; versionId: string; againstVersionId: string },
    options: CallOptions,
  ): Promise<VersionDiff | undefined>;
}

const config = { stability: "beta" as const };
const statuses = (conflicts: boolean | undefined) =>
  conflicts ? errorResponses(400, 401, 403, 404, 409) : errorResponses(400, 401, 403, 404);

/** Registers a versioned family's shared routes. */
export function registerVersionedRoutes<C extends TSchema, U extends TSchema, V extends TSchema, P extends TSchema>(
  app: GatewayApp,
  family: VersionedFamily<C, U, V, P>,
): void {
  const { path, name, tag } = family;
  const tags = [tag];
  const view = ref(family.view);
  const byId = `${path}/:id`;

  app.get(
    path,
    {
      config,
      schema: {
        tags,
        operationId: `list${name}s`,
        summary: `List an organization's ${tag}, newest first`,
        querystring: ListQuerystring,
        response: { 200: List(view), ...statuses(false) },
      },
    },
    async (request) => {
      const r = await family.list(listRequest(request, request.query), rpcOptions(request));
      return { data: r.data, nextCursor: r.nextCursor || null };
    },
  );

  const { create } = family;
  app.post(
    path,
    {
      config,
      schema: {
        tags,
        operationId: `create${name}`,
        summary: create.summary,
        body: create.body,
        response: { 201: view, ...statuses(create.conflicts) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await create.call({ body: bodyOf(request, create.body), request }, rpcOptions(request))),
  );

  const { get } = family;
  app.get(
    byId,
    {
      config: get.stability ? { stability: get.stability } : config,
      schema: {
        tags,
        operationId: `get${name}`,
        summary: get.summary,
        params: IdParams,
        querystring: get.querystring,
        response: { 200: view, ...statuses(false) },
      },
    },
    async (request) => {
      const query = request.query as { versionId?: string };
      return get.call({ id: request.params.id, versionId: query.versionId ?? "" }, rpcOptions(request));
    },
  );

  const { update } = family;
  app.patch(
    byId,
    {
      config,
      schema: {
        tags,
        operationId: `update${name}`,
        summary: update.summary,
        params: IdParams,
        body: update.body,
        response: { 200: view, ...statuses(update.conflicts) },
      },
    },
    async (request) => update.call({ id: request.params.id, body: bodyOf(request, update.body) }, rpcOptions(request)),
  );

  const { createVersion } = family;
  app.post(
    `${byId}/versions`,
    {
      config,
      schema: {
        tags,
        operationId: `create${name}Version`,
        summary: createVersion.summary,
        params: IdParams,
        body: createVersion.body,
        response: { 201: ref(family.versionView), ...statuses(createVersion.conflicts) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await createVersion.call(
            { id: request.params.id, body: bodyOf(request, createVersion.body) },
            rpcOptions(request),
          ),
        ),
  );

  family.afterCreateVersion?.(app);

  const { publish } = family;
  if (publish) {
    app.post(
      `${byId}/publish`,
      {
        config,
        schema: {
          tags,
          operationId: `publish${name}Version`,
          summary: publish.summary,
          params: IdParams,
          body: publish.body,
          response: { 200: view, ...statuses(true) },
        },
      },
      async (request) =>
        publish.call({ id: request.params.id, body: bodyOf(request, publish.body) }, rpcOptions(request)),
    );
  }

  const { diff } = family;
  if (diff) {
    app.get(
      `${byId}/versions/:versionId/diff`,
      {
        config,
        schema: {
          tags,
          operationId: `diff${name}Versions`,
          summary: `The changes from ?against= (default: the version before) to this ${name.toLowerCase()} version`,
          params: VersionParams,
          querystring: DiffQuerystring,
          response: { 200: ref(VersionDiffView), ...statuses(false) },
        },
      },
      async (request) => {
        const { id, versionId } = request.params;
        const r = await diff({ id, versionId, againstVersionId: request.query.against ?? "" }, rpcOptions(request));
        return versionDiffView(r);
      },
    );
  }
}

/** The body as the route's schema describes it: Fastify validated it against that schema before the handler ran. */
function bodyOf<B extends TSchema>(request: FastifyRequest, _schema: B): Static<B> {
  return request.body as Static<B>;
}
