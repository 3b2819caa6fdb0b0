import Type, { type Static } from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf } from "../http/list-page.js";
import { answers, listAnswers, operations } from "../http/operation.js";
import { byId, rpcOptions } from "../http/request.js";
import { Body, errorResponses, ListQuery, ref } from "../schemas.js";
import { IdParams, OrganizationId, organizationOf } from "./catalog-requests.js";
import {
  type ConnectionModelBody,
  ConnectionTestView,
  CreateConnectionBody,
  connectionView,
  ProviderConnectionView,
  UpdateConnectionBody,
} from "./provider-connection-views.js";

const op = operations({ tags: ["provider-connections"], stability: "beta" });

type ModelBody = Static<typeof ConnectionModelBody>;
type Settings = {
  developerRole?: boolean;
  maxTokensParam?: string;
  apiVersion?: string;
  deployments?: Record<string, string>;
  region?: string;
  accessKeyId?: string;
};

const modelsOf = (models: ModelBody[]) =>
  models.map((m) => ({
    model: m.model,
    inputPerMtokUsd: m.inputPerMTokUsd,
    outputPerMtokUsd: m.outputPerMTokUsd,
    cachedInputPerMtokUsd: m.cachedInputPerMTokUsd,
    cacheWritePerMtokUsd: m.cacheWritePerMTokUsd,
    reasoningPerMtokUsd: m.reasoningPerMTokUsd,
    api: m.api,
    tokensPerMinute: m.tokensPerMinute,
    ...(m.capabilities && { capabilities: { ...m.capabilities, input: m.capabilities.input ?? [] } }),
  }));

/** The settings of a body, or undefined when it names none. */
function settingsOf(b: Settings) {
  const given = [b.developerRole, b.maxTokensParam, b.apiVersion, b.deployments, b.region, b.accessKeyId];
  if (given.every((v) => v === undefined)) return undefined;
  return {
    developerRole: b.developerRole,
    maxTokensParam: b.maxTokensParam ?? "",
    apiVersion: b.apiVersion ?? "",
    deployments: b.deployments ?? {},
    region: b.region ?? "",
    accessKeyId: b.accessKeyId ?? "",
  };
}

/** Provider connections (docs/providers.md "Connections"; issue #48): an organization's own model providers. */
export function registerProviderConnectionRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { connections } = deps.clients;

  app.post(
    "/api/provider-connections",
    op("createProviderConnection", "Connect a model provider for an organization; its key is never answered", {
      body: Body({ organizationId: Type.Optional(OrganizationId), ...CreateConnectionBody }),
      response: { 201: ref(ProviderConnectionView), ...errorResponses(400, 401, 403, 404, 409) },
    }),
    async (request, reply) => {
      const b = request.body;
      const r = await connections.createProviderConnection(
        {
          organizationId: organizationOf(request, b.organizationId),
          name: b.name,
          provider: b.provider,
          apiKey: b.apiKey ?? "",
          baseUrl: b.baseUrl ?? "",
          setModels: b.models !== undefined,
          models: modelsOf(b.models ?? []),
          settings: settingsOf(b),
          secretAccessKey: b.secretAccessKey ?? "",
        },
        rpcOptions(request),
      );
      return reply.code(201).send(connectionView(r.connection));
    },
  );

  app.get(
    "/api/provider-connections",
    op("listProviderConnections", "An organization's provider connections, newest first", {
      querystring: Type.Object({ organizationId: Type.Optional(OrganizationId), ...ListQuery }),
      response: listAnswers(ProviderConnectionView, 400, 401, 403, 404),
    }),
    async (request) => {
      const q = request.query;
      const r = await connections.listProviderConnections(
        { organizationId: organizationOf(request, q.organizationId), ...pageOf(q) },
        rpcOptions(request),
      );
      return listPage(r.connections, connectionView, r.nextCursor);
    },
  );

  app.get(
    "/api/provider-connections/:id",
    op("getProviderConnection", "A provider connection (never its key)", {
      params: IdParams,
      response: answers(ProviderConnectionView, 401, 403, 404),
    }),
    byId(connections.getProviderConnection, (r) => connectionView(r.connection)),
  );

  app.patch(
    "/api/provider-connections/:id",
    op("updateProviderConnection", "Change a connection: a new apiKey rotates the key; models replace the list", {
      params: IdParams,
      body: Body(UpdateConnectionBody),
      response: answers(ProviderConnectionView, 400, 401, 403, 404),
    }),
    async (request) => {
      const b = request.body;
      const r = await connections.updateProviderConnection(
        {
          id: request.params.id,
          apiKey: b.apiKey,
          baseUrl: b.baseUrl === null ? "" : b.baseUrl,
          setModels: b.models !== undefined,
          models: modelsOf(b.models ?? []),
          settings: settingsOf(b),
          secretAccessKey: b.secretAccessKey,
        },
        rpcOptions(request),
      );
      return connectionView(r.connection);
    },
  );

  app.delete(
    "/api/provider-connections/:id",
    op("deleteProviderConnection", "Delete a provider connection; its models go with it. Answers it as it was", {
      params: IdParams,
      response: answers(ProviderConnectionView, 401, 403, 404),
    }),
    byId(connections.deleteProviderConnection, (r) => connectionView(r.connection)),
  );

  app.post(
    "/api/provider-connections/:id/test",
    op("testProviderConnection", "One cheap call to the provider; a failing provider is ok: false", {
      params: IdParams,
      response: answers(ConnectionTestView, 400, 401, 403, 404),
    }),
    byId(connections.testProviderConnection, (r) => ({
      ok: r.ok,
      latencyMs: Number(r.latencyMs),
      ...(r.error && { error: { code: r.error.code, message: r.error.message } }),
      ...(r.models.length > 0 && { models: r.models }),
    })),
  );
}
