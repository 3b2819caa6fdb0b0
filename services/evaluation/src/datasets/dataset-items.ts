/**
 * A dataset's items (docs/datasets.md): added (sent, imported from a file, copied from elsewhere),
 * read at any version, removed. Each change is one version (datasets.ts changeItems); a batch is
 * checked whole before anything is stored.
 */
import { type FieldIssue, failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { LIMITS } from "@kiln/kit/limits";
import { findPage, type Page } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { SCOPES } from "../access.js";
import type { DatasetCollections, DatasetDoc, DatasetItemDoc } from "./dataset-store.js";
import type { Datasets } from "./datasets.js";
import { ITEM_FORMATS, isItemFormat, itemsOfFile } from "./item-files.js";
import { type ItemSources, type SourceIds, sourceIssues } from "./item-sources.js";
import { type CheckedItem, checkNewItems, type NewItem } from "./new-items.js";

export interface DatasetItemsDeps {
  collections: DatasetCollections;
  datasets: Datasets;
  sources: ItemSources;
  now: () => Date;
}

/** The filter of a dataset's items at `version`: added at or before it, not removed by then. */
export function itemsAtFilter(dataset: Pick<DatasetDoc, "_id" | "organizationId">, version: number) {
  return {
    datasetId: dataset._id,
    organizationId: dataset.organizationId,
    addedVersion: { $lte: version },
    $or: [{ removedVersion: null }, { removedVersion: { $gt: version } }],
  };
}

/** The version a read names: 0 is the current one; others must exist. */
export function versionOf(dataset: DatasetDoc, requested: number, field = "version"): number {
  if (requested === 0) return dataset.version;
  if (!Number.isInteger(requested) || requested < 1 || requested > dataset.version) {
    const issue =
      dataset.version === 0 ? "the dataset has no version yet" : `must be from 1 to ${dataset.version}, its versions`;
    throw invalidArgument(`invalid ${field}`, [{ field, issue }]);
  }
  return requested;
}

/** The row an issue names (`rows[3].city` → 3); issues of the whole file first. */
const rowOf = (issue: FieldIssue) => Number(/^rows\[(\d+)\]/.exec(issue.field)?.[1] ?? -1);

export function createDatasetItems(deps: DatasetItemsDeps) {
  const c = deps.collections;

  /** Stores checked items at a new version of the dataset; answers the dataset and the items. */
  async function store(dataset: DatasetDoc, checked: CheckedItem[], field: string) {
    if (dataset.itemCount + checked.length > LIMITS.datasetItems) {
      throw invalidArgument(`a dataset holds at most ${LIMITS.datasetItems} items`, [
        { field, issue: `would make the dataset hold more than ${LIMITS.datasetItems} items` },
      ]);
    }
    const docs: DatasetItemDoc[] = [];
    const after = await deps.datasets.changeItems(dataset, async (version) => {
      const createdAt = deps.now();
      for (const item of checked) {
        docs.push({
          _id: newId("dsi"),
          datasetId: dataset._id,
          organizationId: dataset.organizationId,
          ...item,
          addedVersion: version,
          removedVersion: null,
          createdAt,
        });
      }
      await c.items.insertMany(docs);
      return { added: docs.length, removed: 0 };
    });
    return { dataset: after, items: docs };
  }

  function checked(items: NewItem[], at?: (i: number) => string, field = "items"): CheckedItem[] {
    const result = checkNewItems(items, at, field);
    if (result.issues.length > 0) throw invalidArgument("the dataset items are invalid", result.issues);
    return result.items;
  }

  return {
    async addItems(principal: Principal, input: { datasetId: string; items: NewItem[] }) {
      const dataset = await deps.datasets.datasetFor(principal, input.datasetId, SCOPES.evaluationsWrite);
      return store(dataset, checked(input.items), "items");
    },

    /** Items of one version (0: the current one), oldest first. */
    async listItems(
      principal: Principal,
      input: { datasetId: string; version: number; limit: number; cursor: string },
    ): Promise<Page<DatasetItemDoc> & { version: number }> {
      const dataset = await deps.datasets.datasetFor(principal, input.datasetId, SCOPES.evaluationsRead);
      const version = versionOf(dataset, input.version);
      const page = await findPage(c.items, itemsAtFilter(dataset, version), { ...input, oldestFirst: true });
      return { ...page, version };
    },

    /** Removes an item from the current version on; earlier versions keep it. */
    async removeItem(principal: Principal, input: { datasetId: string; itemId: string }) {
      const dataset = await deps.datasets.datasetFor(principal, input.datasetId, SCOPES.evaluationsWrite);
      const filter = { _id: input.itemId, datasetId: dataset._id, organizationId: dataset.organizationId };
      const item = await c.items.findOne({ ...filter, removedVersion: null });
      if (!item) throw notFound("dataset item");
      let removedAt = 0;
      const after = await deps.datasets.changeItems(dataset, async (version) => {
        const r = await c.items.updateOne({ ...filter, removedVersion: null }, { $set: { removedVersion: version } });
        if (r.modifiedCount > 0) removedAt = version;
        return { added: 0, removed: r.modifiedCount };
      });
      // Another request removed it first: its version stands, this one made none.
      if (removedAt === 0) throw notFound("dataset item");
      return { dataset: after, item: { ...item, removedVersion: removedAt } };
    },

    /** Items of a CSV or JSONL file's text; one bad row refuses the file (docs/datasets.md "Importing"). */
    async importItems(principal: Principal, input: { datasetId: string; format: string; content: string }) {
      if (!isItemFormat(input.format)) {
        throw invalidArgument(`format must be one of ${ITEM_FORMATS.join(", ")}`, [
          { field: "format", issue: `must be one of ${ITEM_FORMATS.join(", ")}` },
        ]);
      }
      const dataset = await deps.datasets.datasetFor(principal, input.datasetId, SCOPES.evaluationsWrite);
      const file = itemsOfFile(input.format, input.content);
      // The rows that read are checked as items too: one answer names every bad row.
      const rows = file.items.length > 0 ? checkNewItems(file.items, (i) => `rows[${i}]`, "rows") : undefined;
      const issues = [...file.issues, ...(rows?.issues ?? [])].sort((a, b) => rowOf(a) - rowOf(b));
      if (issues.length > 0 || !rows) throw invalidArgument(`the ${input.format} file is invalid`, issues.slice(0, 50));
      return store(dataset, rows.items, "rows");
    },

    /** Copies of evaluation cases, runs and annotation-queue items of the dataset's organization. */
    async addItemsFrom(principal: Principal, input: { datasetId: string } & SourceIds) {
      const issues: FieldIssue[] = sourceIssues(input);
      if (issues.length > 0) throw invalidArgument("invalid sources", issues);
      const dataset = await deps.datasets.datasetFor(principal, input.datasetId, SCOPES.evaluationsWrite);
      const read = await deps.sources.itemsOf(dataset.organizationId, input);
      if (read.issues.length > 0) throw invalidArgument("some sources cannot be added", read.issues);
      return store(dataset, checked(read.items), "items");
    },

    /** The ids of the items of a dataset at `version` (0: current), in the order they were added: what an evaluation runs. */
    async itemIdsAt(organizationId: string, datasetId: string, requested: number) {
      const dataset = await c.datasets.findOne({ _id: datasetId, organizationId });
      if (!dataset)
        throw invalidArgument("unknown dataset", [
          { field: "datasetId", issue: "is not a dataset of the organization" },
        ]);
      const version = versionOf(dataset, requested, "datasetVersion");
      const docs = await c.items.find(itemsAtFilter(dataset, version), { sort: { _id: 1 }, projection: { _id: 1 } });
      if (docs.length === 0) throw failedPrecondition(`the dataset has no items at version ${version}`);
      return { version, itemIds: docs.map((d) => d._id) };
    },
  };
}

export type DatasetItems = ReturnType<typeof createDatasetItems>;
