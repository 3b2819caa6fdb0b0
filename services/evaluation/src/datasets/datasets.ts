/**
 * Datasets (docs/datasets.md): created, read, renamed and deleted here; their items change through
 * `changeItems`, which gives every change a version of its own.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { DomainError, type FieldIssue, invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { LIMITS } from "@kiln/kit/limits";
import type { Logger } from "@kiln/kit/logger";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { isDuplicateKeyError } from "@kiln/kit/store";
import { type Access, SCOPES, type Scope } from "../access.js";
import type { DatasetCollections, DatasetDoc } from "./dataset-store.js";

export interface DatasetsDeps {
  collections: DatasetCollections;
  access: Access;
  now: () => Date;
  logger?: Logger;
}

const notFoundOf = (): never => {
  throw notFound("dataset");
};

/** What one change of items did, for its version's record and the dataset's count. */
export interface ItemChange {
  added: number;
  removed: number;
}

/**
 * Changes of one dataset run one at a time: a change takes the number after the dataset's version,
 * and one that finds it taken waits for that change to finish (WAIT_MS between looks, VERSION_TRIES
 * looks, then 503). A change left unfinished for STALE_CHANGE_MS (its process died) is taken back.
 */
const VERSION_TRIES = 100;
const WAIT_MS = 50;
const STALE_CHANGE_MS = 30_000;

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

  /**
   * Inserts the record of the dataset's next version, once the change before it has finished: the
   * unique `_id` lets one change alone take a number, so the dataset's document is written by one
   * change at a time (no update of it races another, on any store). Answers the number and the
   * dataset as that change found it.
   */
  async function allocateVersion(dataset: DatasetDoc): Promise<{ version: number; dataset: DatasetDoc }> {
    let current = dataset;
    for (let i = 0; i < VERSION_TRIES; i++) {
      const version = current.version + 1;
      const _id = `${current._id}:${version}`;
      try {
        const record = { _id, datasetId: current._id, organizationId: current.organizationId, version };
        await c.versions.insertOne({ ...record, added: 0, removed: 0, createdAt: deps.now() });
        return { version, dataset: current };
      } catch (e) {
        if (!isDuplicateKeyError(e)) throw e;
      }
      const other = await c.versions.findOne({ _id });
      if (other && deps.now().getTime() - other.createdAt.getTime() > STALE_CHANGE_MS) {
        deps.logger?.warn({ datasetId: current._id, version }, "taking back a dataset change that never finished");
        await undoVersion(current, version);
      } else await sleep(WAIT_MS);
      current =
        (await c.datasets.findOne({ _id: current._id, organizationId: current.organizationId })) ?? notFoundOf();
    }
    throw new DomainError("unavailable", "the dataset is being changed by another request; retry");
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
      const { version, dataset: before } = await allocateVersion(dataset);
      let change: ItemChange;
      try {
        change = await apply(version);
      } catch (e) {
        await undoVersion(before, version).catch(() => {});
        throw e;
      }
      if (change.added === 0 && change.removed === 0) {
        await c.versions.deleteOne({ _id: `${before._id}:${version}` });
        return before;
      }
      const filter = { _id: before._id, organizationId: before.organizationId };
      await c.versions.updateOne({ _id: `${before._id}:${version}` }, { $set: { ...change } });
      // The version moves last: a read at the dataset's version never sees half a change.
      await c.datasets.updateOne(filter, {
        $inc: { itemCount: change.added - change.removed },
        $set: { version, updatedAt: deps.now() },
      });
      return (await c.datasets.findOne(filter)) ?? before;
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
