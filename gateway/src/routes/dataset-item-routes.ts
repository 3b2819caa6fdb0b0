import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf } from "../http/list-page.js";
import { rpcOptions } from "../http/request.js";
import { requestJsonText as json } from "../json-limits.js";
import { Body, errorResponses, IdempotencyHeaders, IdParams, List, ListQuery, OneOf, ref } from "../schemas.js";
import { Id, JsonObject, JsonValue } from "./catalog-requests.js";
import { DatasetItemView, DatasetView, datasetItemView, datasetView, datasetOp as op } from "./dataset-views.js";

const FORMATS = ["csv", "jsonl"] as const;
/** The content types an import takes as the file itself, by format. */
const FILE_TYPES = { csv: ["text/csv"], jsonl: ["application/x-ndjson", "application/jsonl", "application/ndjson"] };

const NewItem = Body({
  input: JsonObject("the variables (or skill input)", LIMITS.variablesBytes),
  expectedOutput: Type.Optional(JsonValue("any JSON; null or absent: none", LIMITS.expectedOutputBytes)),
  metadata: Type.Optional(JsonObject("free-form, for filtering and display", LIMITS.datasetMetadataBytes)),
});

const SourceIds = (what: string) =>
  Type.Optional(Type.Array(Id, { maxItems: LIMITS.datasetSourcesPerRequest, uniqueItems: true, description: what }));

/** What an add answers: the dataset at its new version, and the items added. */
const AddedItems = Type.Object({
  dataset: ref(DatasetView),
  data: Type.Array(ref(DatasetItemView)),
  nextCursor: Type.Null(),
});

const ItemsQuery = Type.Object({
  version: Type.Optional(
    Type.String({ pattern: "^[1-9][0-9]{0,8}$", description: "the version to read; default: the current one" }),
  ),
  ...ListQuery,
});

const addedItems = (r: {
  dataset?: Parameters<typeof datasetView>[0];
  items: Parameters<typeof datasetItemView>[0][];
}) => ({
  dataset: datasetView(r.dataset),
  data: r.items.map(datasetItemView),
  nextCursor: null,
});

/** A dataset's items (docs/datasets.md): add, list at a version, remove, import a file, copy from elsewhere. */
export function registerDatasetItemRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { datasets } = deps.clients;

  app.post(
    "/api/datasets/:id/items",
    op("addDatasetItems", "Add items to a dataset: one new version; the batch is stored whole or not at all", {
      headers: IdempotencyHeaders,
      params: IdParams,
      body: Body({ items: Type.Array(NewItem, { minItems: 1, maxItems: LIMITS.datasetItemsPerRequest }) }),
      response: { 201: AddedItems, ...errorResponses(400, 401, 403, 404) },
    }),
    async (request, reply) => {
      const items = request.body.items.map((i) => ({
        input: json(i.input),
        expectedOutput:
          i.expectedOutput === undefined || i.expectedOutput === null ? undefined : json(i.expectedOutput),
        metadata: i.metadata === undefined ? undefined : json(i.metadata),
      }));
      const r = await datasets.addDatasetItems({ datasetId: request.params.id, items }, rpcOptions(request));
      return reply.code(201).send(addedItems(r));
    },
  );

  app.get(
    "/api/datasets/:id/items",
    op("listDatasetItems", "A dataset's items at a version (default: the current one), in the order they were added", {
      params: IdParams,
      querystring: ItemsQuery,
      response: {
        200: Type.Object({ ...List(ref(DatasetItemView)).properties, version: Type.Integer({ minimum: 0 }) }),
        ...errorResponses(400, 401, 403, 404),
      },
    }),
    async (request) => {
      const q = request.query;
      const r = await datasets.listDatasetItems(
        { datasetId: request.params.id, version: q.version ? Number(q.version) : 0, ...pageOf(q) },
        rpcOptions(request),
      );
      return { ...listPage(r.items, datasetItemView, r.nextCursor), version: r.version };
    },
  );

  app.delete(
    "/api/datasets/:id/items/:itemId",
    op("removeDatasetItem", "Remove an item from the dataset: one new version; earlier versions keep it", {
      params: Type.Object({ id: Id, itemId: Id }),
      response: { 200: ref(DatasetItemView), ...errorResponses(401, 403, 404) },
    }),
    async (request) => {
      const { id, itemId } = request.params;
      const r = await datasets.removeDatasetItem({ datasetId: id, itemId }, rpcOptions(request));
      return datasetItemView(r.item);
    },
  );

  app.post(
    "/api/datasets/:id/items/from",
    op(
      "addDatasetItemsFrom",
      "Copy evaluation cases, runs and annotation-queue items of the organization into the dataset: one new version",
      {
        headers: IdempotencyHeaders,
        params: IdParams,
        body: Body({
          evaluationCaseIds: SourceIds("evaluation cases: their input and expected output"),
          runIds: SourceIds("runs: their input variables, and their output as the expected output"),
          annotationItemIds: SourceIds("annotation-queue items of runs: as their runs"),
        }),
        response: { 201: AddedItems, ...errorResponses(400, 401, 403, 404) },
      },
    ),
    async (request, reply) => {
      const b = request.body;
      const r = await datasets.addDatasetItemsFrom(
        {
          datasetId: request.params.id,
          evaluationCaseIds: b.evaluationCaseIds ?? [],
          runIds: b.runIds ?? [],
          annotationItemIds: b.annotationItemIds ?? [],
        },
        rpcOptions(request),
      );
      return reply.code(201).send(addedItems(r));
    },
  );

  // The file as it is (text/csv, application/x-ndjson): parsed into {format, content} in this scope only.
  app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    for (const format of FORMATS) {
      scope.addContentTypeParser(FILE_TYPES[format], { parseAs: "string" }, (_req, body, done) => {
        done(null, { format, content: typeof body === "string" ? body : body.toString("utf8") });
      });
    }
    scope.post(
      "/api/datasets/:id/import",
      op(
        "importDatasetItems",
        "Import items from a CSV or JSONL file (the file as the body with Content-Type text/csv or application/x-ndjson, or JSON {format, content}): one new version; a bad row refuses the whole file",
        {
          headers: IdempotencyHeaders,
          params: IdParams,
          body: Body({
            format: OneOf(FORMATS),
            content: Type.String({ maxLength: LIMITS.bodyBytes, description: "the file's text" }),
          }),
          response: {
            201: Type.Object({ dataset: ref(DatasetView), imported: Type.Integer({ minimum: 1 }) }),
            ...errorResponses(400, 401, 403, 404),
          },
        },
      ),
      async (request, reply) => {
        const { format, content } = request.body;
        const r = await datasets.importDatasetItems(
          { datasetId: request.params.id, format, content },
          rpcOptions(request),
        );
        return reply.code(201).send({ dataset: datasetView(r.dataset), imported: r.imported });
      },
    );
  });
}
