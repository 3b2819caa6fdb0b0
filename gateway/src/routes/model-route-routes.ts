import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf } from "../http/list-page.js";
import { answers, listAnswers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { Body, errorResponses, ListQuery, Nullable, ref } from "../schemas.js";
import { IdParams, OrganizationId, organizationOf } from "./catalog-requests.js";
import {
  AttemptTimeoutMs,
  ModelRouteView,
  modelRouteView,
  RetryOn,
  RouteName,
  RouteStrategy,
  RouteTargets,
} from "./model-route-views.js";

const op = operations({ tags: ["model routes"], stability: "beta" });

/** Model routes (docs/providers.md "Routes"; issue #48): fallback and weighted lists of models. */
export function registerModelRouteRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { modelRoutes } = deps.clients;

  app.post(
    "/api/model-routes",
    op("createModelRoute", 'Create a model route; runs and versions name it as the model "route/<name>"', {
      body: Body({
        organizationId: Type.Optional(OrganizationId),
        name: RouteName,
        strategy: RouteStrategy,
        targets: RouteTargets,
        retryOn: Type.Optional(RetryOn),
        attemptTimeoutMs: Type.Optional(AttemptTimeoutMs),
      }),
      response: { 201: ref(ModelRouteView), ...errorResponses(400, 401, 403, 404, 409) },
    }),
    async (request, reply) => {
      const b = request.body;
      const r = await modelRoutes.createModelRoute(
        {
          organizationId: organizationOf(request, b.organizationId),
          name: b.name,
          strategy: b.strategy,
          targets: b.targets,
          ...(b.retryOn ? { retryOn: { kinds: b.retryOn } } : {}),
          ...(b.attemptTimeoutMs !== undefined ? { attemptTimeoutMs: BigInt(b.attemptTimeoutMs) } : {}),
        },
        rpcOptions(request),
      );
      return reply.code(201).send(modelRouteView(r.route));
    },
  );

  app.get(
    "/api/model-routes",
    op("listModelRoutes", "An organization's model routes, newest first", {
      querystring: Type.Object({ organizationId: Type.Optional(OrganizationId), ...ListQuery }),
      response: listAnswers(ModelRouteView, 400, 401, 403, 404),
    }),
    async (request) => {
      const q = request.query;
      const r = await modelRoutes.listModelRoutes(
        { organizationId: organizationOf(request, q.organizationId), ...pageOf(q) },
        rpcOptions(request),
      );
      return listPage(r.routes, modelRouteView, r.nextCursor);
    },
  );

  app.get(
    "/api/model-routes/:id",
    op("getModelRoute", "A model route", { params: IdParams, response: answers(ModelRouteView, 401, 403, 404) }),
    async (request) =>
      modelRouteView((await modelRoutes.getModelRoute({ id: request.params.id }, rpcOptions(request))).route),
  );

  app.patch(
    "/api/model-routes/:id",
    op("updateModelRoute", "Change a model route; runs see the change within ROUTE_CACHE_TTL_MS in other processes", {
      params: IdParams,
      body: Body({
        name: Type.Optional(RouteName),
        strategy: Type.Optional(RouteStrategy),
        targets: Type.Optional(RouteTargets),
        retryOn: Type.Optional(RetryOn),
        attemptTimeoutMs: Type.Optional(Nullable(AttemptTimeoutMs, { description: "null removes the bound" })),
      }),
      response: answers(ModelRouteView, 400, 401, 403, 404, 409),
    }),
    async (request) => {
      const b = request.body;
      const r = await modelRoutes.updateModelRoute(
        {
          id: request.params.id,
          name: b.name,
          strategy: b.strategy,
          setTargets: b.targets !== undefined,
          targets: b.targets ?? [],
          ...(b.retryOn ? { retryOn: { kinds: b.retryOn } } : {}),
          ...(typeof b.attemptTimeoutMs === "number" ? { attemptTimeoutMs: BigInt(b.attemptTimeoutMs) } : {}),
          clearAttemptTimeout: b.attemptTimeoutMs === null,
        },
        rpcOptions(request),
      );
      return modelRouteView(r.route);
    },
  );

  app.delete(
    "/api/model-routes/:id",
    op("deleteModelRoute", "Delete a model route; answers it as it was. Runs naming it fail with 400 afterwards", {
      params: IdParams,
      response: answers(ModelRouteView, 401, 403, 404),
    }),
    async (request) =>
      modelRouteView((await modelRoutes.deleteModelRoute({ id: request.params.id }, rpcOptions(request))).route),
  );
}
