/** The DatasetService RPCs (proto/kiln/evaluation/v1/datasets.proto) over the dataset use cases. */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { type FieldIssue, invalidArgument } from "@kiln/kit/errors";
import { type JsonText, jsonTextOf, readJsonText } from "@kiln/kit/json-text";
import { answering, answeringOne, answeringPage, withInput } from "@kiln/kit/principal";
import {
  type AddDatasetItemsRequest,
  type DatasetItemSchema,
  type DatasetSchema,
  DatasetService,
} from "@kiln/proto/datasets";
import type { DatasetItems } from "./dataset-items.js";
import type { DatasetDoc, DatasetItemDoc } from "./dataset-store.js";
import type { Datasets } from "./datasets.js";
import type { NewItem } from "./new-items.js";

export function datasetToProto(d: DatasetDoc): MessageInitShape<typeof DatasetSchema> {
  return {
    id: d._id,
    organizationId: d.organizationId,
    name: d.name,
    description: d.description,
    version: d.version,
    itemCount: d.itemCount,
    createdAt: timestampFromDate(d.createdAt),
    updatedAt: timestampFromDate(d.updatedAt),
  };
}

const optionalJson = (text: string | null) => (text === null ? undefined : jsonTextOf(text));

export function itemToProto(i: DatasetItemDoc): MessageInitShape<typeof DatasetItemSchema> {
  return {
    id: i._id,
    datasetId: i.datasetId,
    organizationId: i.organizationId,
    input: jsonTextOf(i.inputJson),
    expectedOutput: optionalJson(i.expectedOutputJson),
    metadata: optionalJson(i.metadataJson),
    addedInVersion: i.addedVersion,
    removedInVersion: i.removedVersion ?? undefined,
    source: i.source ?? undefined,
    createdAt: timestampFromDate(i.createdAt),
  };
}

/** The items of a request as JSON values; a field whose text is not JSON is refused by name. */
function newItemsOf(req: AddDatasetItemsRequest): { datasetId: string; items: NewItem[] } {
  const issues: FieldIssue[] = [];
  const read = (message: JsonText | undefined, field: string) => {
    const r = readJsonText(message);
    if (!r.ok) issues.push({ field, issue: r.issue });
    return r.ok ? r.value : undefined;
  };
  const items = req.items.map((item, i) => ({
    input: read(item.input, `items[${i}].input`),
    expectedOutput: read(item.expectedOutput, `items[${i}].expectedOutput`),
    metadata: read(item.metadata, `items[${i}].metadata`),
  }));
  if (issues.length > 0) throw invalidArgument("the dataset items are invalid", issues);
  return { datasetId: req.datasetId, items };
}

const datasetAnswer = answeringOne("dataset", datasetToProto);
const itemsAnswer = answering((r: { dataset: DatasetDoc; items: DatasetItemDoc[] }) => ({
  dataset: datasetToProto(r.dataset),
  items: r.items.map(itemToProto),
}));

export function registerDatasetRpc(router: ConnectRouter, useCases: { datasets: Datasets; items: DatasetItems }) {
  const { datasets, items } = useCases;
  router.service(DatasetService, {
    createDataset: datasetAnswer(datasets.createDataset),
    getDataset: datasetAnswer(datasets.getDataset),
    listDatasets: answeringPage("datasets", datasetToProto)(datasets.listDatasets),
    updateDataset: datasetAnswer(datasets.updateDataset),
    deleteDataset: datasetAnswer(datasets.deleteDataset),
    addDatasetItems: itemsAnswer(withInput(newItemsOf, items.addItems)),
    listDatasetItems: answering((page: Awaited<ReturnType<DatasetItems["listItems"]>>) => ({
      items: page.items.map(itemToProto),
      nextCursor: page.nextCursor,
      version: page.version,
    }))(items.listItems),
    removeDatasetItem: answering((r: { dataset: DatasetDoc; item: DatasetItemDoc }) => ({
      dataset: datasetToProto(r.dataset),
      item: itemToProto(r.item),
    }))(items.removeItem),
    importDatasetItems: answering((r: { dataset: DatasetDoc; items: DatasetItemDoc[] }) => ({
      dataset: datasetToProto(r.dataset),
      imported: r.items.length,
    }))(items.importItems),
    addDatasetItemsFrom: itemsAnswer(items.addItemsFrom),
  });
}
