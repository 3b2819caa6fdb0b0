import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf } from "../http/list-page.js";
import { answers, listAnswers } from "../http/operation.js";
import { byId, rpcOptions } from "../http/request.js";
import { Body, errorResponses, IdempotencyHeaders, IdParams, ListQuery, ref } from "../schemas.js";
import { Description, Name, OrganizationId, organizationOf } from "./catalog-requests.js";
import { registerDatasetItemRoutes } from "./dataset-item-routes.js";
import { DatasetView, datasetView, datasetOp as op } from "./dataset-views.js";

/** Datasets (docs/datasets.md; issue #50): versioned sets of items that evaluations run on. */
export function registerDatasetRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { datasets } = deps.clients;

  app.post(
    "/api/datasets",
    op("createDataset", "Create a dataset: a versioned set of items (input variables, expected output, metadata)", {
      headers: IdempotencyHeaders,
      body: Body({
        organizationId: Type.Optional(OrganizationId),
        name: Name,
        description: Type.Optional(Description),
      }),
      response: { 201: ref(DatasetView), ...errorResponses(400, 401, 403, 404) },
    }),
    async (request, reply) => {
      const b = request.body;
      const r = await datasets.createDataset(
        { organizationId: organizationOf(request, b.organizationId), name: b.name, description: b.description ?? "" },
        rpcOptions(request),
      );
      return reply.code(201).send(datasetView(r.dataset));
    },
  );

  app.get(
    "/api/datasets",
    op("listDatasets", "An organization's datasets, newest first", {
      querystring: Type.Object({ organizationId: Type.Optional(OrganizationId), ...ListQuery }),
      response: listAnswers(DatasetView, 400, 401, 403, 404),
    }),
    async (request) => {
      const q = request.query;
      const r = await datasets.listDatasets(
        { organizationId: organizationOf(request, q.organizationId), ...pageOf(q) },
        rpcOptions(request),
      );
      return listPage(r.datasets, datasetView, r.nextCursor);
    },
  );

  app.get(
    "/api/datasets/:id",
    op("getDataset", "A dataset with its current version and item count", {
      params: IdParams,
      response: answers(DatasetView, 401, 403, 404),
    }),
    byId(datasets.getDataset, (r) => datasetView(r.dataset)),
  );

  app.patch(
    "/api/datasets/:id",
    op("updateDataset", "Rename or redescribe a dataset (its items and version stay)", {
      params: IdParams,
      body: Body({ name: Type.Optional(Name), description: Type.Optional(Description) }),
      response: answers(DatasetView, 400, 401, 403, 404),
    }),
    async (request) => {
      const b = request.body;
      const r = await datasets.updateDataset(
        { id: request.params.id, name: b.name, description: b.description },
        rpcOptions(request),
      );
      return datasetView(r.dataset);
    },
  );

  app.delete(
    "/api/datasets/:id",
    op("deleteDataset", "Delete a dataset with its items and versions (evaluation runs on it keep their reports)", {
      params: IdParams,
      response: answers(DatasetView, 401, 403, 404),
    }),
    byId(datasets.deleteDataset, (r) => datasetView(r.dataset)),
  );

  registerDatasetItemRoutes(app, deps);
}
