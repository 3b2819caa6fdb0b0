/**
 * Datasets (docs/datasets.md): created, read, renamed and deleted here; their items change through
 * `changeItems`, which gives every change a version of its own.
 */
import { DomainError, type FieldIssue, invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { LIMITS } from "@kiln/kit/limits";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { isDuplicateKeyError } from "@kiln/kit/store";
import { type Access, SCOPES, type Scope } from "../access.js";
import type { DatasetCollections, DatasetDoc } from "./dataset-store.js";

export interface DatasetsDeps {
  collections: DatasetCollections;
  access: Access;
  now: () => Date;
}

/** What one change of items did, for its version's record and the dataset's count. */
export interface ItemChange {
  added: number;
  removed: number;
}

/** Concurrent changes of one dataset each take the next free number; past this many clashes, 503. */
const VERSION_TRIES = 20;

function checkedText(
  field: "name" | "description",
  value: string | undefined,
  issues: FieldIssue[],
): string | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  const max = field === "name" ? LIMITS.nameChars : LIMITS.descriptionChars;
  if (field === "name" && text === "") issues.push({ field, issue: "must not be empty" });
  if (text.length > max) issues.push({ field, issue: `must be at most ${max} characters` });
  return text;
}

export function createDatasets(deps: DatasetsDeps) {
  const c = deps.collections;

  /** The dataset as the caller may use it with `scope`; another organization's is not found. */
  async function datasetFor(principal: Principal, id: string, scope: Scope): Promise<DatasetDoc> {
    if (id === "") throw invalidArgument("datasetId is required", [{ field: "datasetId", issue: "is required" }]);
    const dataset = await c.datasets.findOne({ _id: id });
    if (!dataset) throw notFound("dataset");
    await deps.access.onResource(principal, dataset.organizationId, scope, "dataset");
    return dataset;
  }

  /** Inserts the record of the dataset's next version: its number is the first one free. */
  async function allocateVersion(dataset: DatasetDoc): Promise<number> {
    for (let version = dataset.version + 1, i = 0; i < VERSION_TRIES; version++, i++) {
      try {
        await c.versions.insertOne({
          _id: `${dataset._id}:${version}`,
          datasetId: dataset._id,
          organizationId: dataset.organizationId,
          version,
          added: 0,
          removed: 0,
          createdAt: deps.now(),
        });
        return version;
      } catch (e) {
        if (!isDuplicateKeyError(e)) throw e;
      }
    }
    throw new DomainError("unavailable", "the dataset is changing too often at once; retry");
  }

  /** Takes back what a failed change may have written at `version`, and the version itself. */
  async function undoVersion(dataset: DatasetDoc, version: number): Promise<void> {
    const scope = { datasetId: dataset._id, organizationId: dataset.organizationId };
    await c.items.deleteMany({ ...scope, addedVersion: version });
    await c.items.updateMany({ ...scope, removedVersion: version }, { $set: { removedVersion: null } });
    await c.versions.deleteOne({ _id: `${dataset._id}:${version}` });
  }

  const datasets = {
    datasetFor,

    /**
     * Applies a change of the dataset's items at a new version: `apply` writes items added at it
     * (or marks items removed at it) and says how many. A change that fails is taken back; one
     * that changed nothing leaves no version. Answers the dataset after the change.
     */
    async changeItems(dataset: DatasetDoc, apply: (version: number) => Promise<ItemChange>): Promise<DatasetDoc> {
      const version = await allocateVersion(dataset);
      let change: ItemChange;
      try {
        change = await apply(version);
      } catch (e) {
        await undoVersion(dataset, version).catch(() => {});
        throw e;
      }
      if (change.added === 0 && change.removed === 0) {
        await c.versions.deleteOne({ _id: `${dataset._id}:${version}` });
        return dataset;
      }
      const filter = { _id: dataset._id, organizationId: dataset.organizationId };
      await c.versions.updateOne({ _id: `${dataset._id}:${version}` }, { $set: { ...change } });
      await c.datasets.updateOne(filter, {
        $inc: { itemCount: change.added - change.removed },
        $set: { updatedAt: deps.now() },
      });
      // Only forward: a change that took a lower number and finished later leaves the newer one current.
      await c.datasets.updateOne({ ...filter, version: { $lt: version } }, { $set: { version } });
      return (await c.datasets.findOne(filter)) ?? dataset;
    },

    async createDataset(
      principal: Principal,
      input: { organizationId: string; name: string; description: string },
    ): Promise<DatasetDoc> {
      const issues: FieldIssue[] = [];
      if (input.organizationId === "") issues.push({ field: "organizationId", issue: "is required" });
      const name = checkedText("name", input.name, issues) ?? "";
      const description = checkedText("description", input.description, issues) ?? "";
      if (issues.length > 0) throw invalidArgument("the dataset is invalid", issues);
      await deps.access.onResource(principal, input.organizationId, SCOPES.evaluationsWrite, "organization");
      const now = deps.now();
      const doc: DatasetDoc = {
        _id: newId("dst"),
        organizationId: input.organizationId,
        name,
        description,
        version: 0,
        itemCount: 0,
        createdAt: now,
        updatedAt: now,
      };
      await c.datasets.insertOne(doc);
      return doc;
    },

    getDataset: (principal: Principal, input: { id: string }) =>
      datasetFor(principal, input.id, SCOPES.evaluationsRead),

    async listDatasets(principal: Principal, input: { organizationId: string; limit: number; cursor: string }) {
      if (input.organizationId === "")
        throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
      await deps.access.onResource(principal, input.organizationId, SCOPES.evaluationsRead, "organization");
      return findPage(c.datasets, { organizationId: input.organizationId }, input);
    },

    async updateDataset(
      principal: Principal,
      input: { id: string; name?: string; description?: string },
    ): Promise<DatasetDoc> {
      const dataset = await datasetFor(principal, input.id, SCOPES.evaluationsWrite);
      const issues: FieldIssue[] = [];
      const name = checkedText("name", input.name, issues);
      const description = checkedText("description", input.description, issues);
      if (issues.length > 0) throw invalidArgument("the dataset is invalid", issues);
      const set = {
        ...(name !== undefined && { name }),
        ...(description !== undefined && { description }),
      };
      if (Object.keys(set).length === 0) return dataset;
      const filter = { _id: dataset._id, organizationId: dataset.organizationId };
      const updatedAt = deps.now();
      return (
        (await c.datasets.findOneAndUpdate(filter, { $set: { ...set, updatedAt } })) ?? {
          ...dataset,
          ...set,
          updatedAt,
        }
      );
    },

    /** Deletes the dataset, its items and its versions; evaluation runs on it keep their reports. */
    async deleteDataset(principal: Principal, input: { id: string }): Promise<DatasetDoc> {
      const dataset = await datasetFor(principal, input.id, SCOPES.evaluationsWrite);
      const filter = { _id: dataset._id, organizationId: dataset.organizationId };
      if ((await c.datasets.deleteOne(filter)).deletedCount === 0) throw notFound("dataset");
      const scope = { datasetId: dataset._id, organizationId: dataset.organizationId };
      await c.items.deleteMany(scope);
      await c.versions.deleteMany(scope);
      return dataset;
    },
  };
  return datasets;
}

export type Datasets = ReturnType<typeof createDatasets>;
