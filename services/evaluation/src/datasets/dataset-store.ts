import type { Collection, Store } from "@kiln/kit/store";

/** Datasets' documents (docs/datasets.md "How versions are kept"). User JSON is JSON text. */

export interface DatasetDoc {
  _id: string;
  organizationId: string;
  name: string;
  description: string;
  /** The newest version whose change is complete; 0 before the first change. */
  version: number;
  /** Items at `version`. */
  itemCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export type ItemSourceKind = "evaluation_case" | "run" | "annotation_item";

/**
 * One item. Items never change: a removal records the version it happened at, so the items of
 * version N are those added at or before N and not removed at or before N (one query, no copies).
 */
export interface DatasetItemDoc {
  _id: string;
  datasetId: string;
  organizationId: string;
  inputJson: string;
  expectedOutputJson: string | null;
  metadataJson: string | null;
  addedVersion: number;
  removedVersion: number | null;
  source: { kind: ItemSourceKind; id: string } | null;
  createdAt: Date;
}

/**
 * One version (`_id` `<dataset id>:<version>`): its insert allocates the number, and the unique
 * `_id` is what makes two concurrent changes take two numbers on every store.
 */
export interface DatasetVersionDoc {
  _id: string;
  datasetId: string;
  organizationId: string;
  version: number;
  added: number;
  removed: number;
  createdAt: Date;
}

export interface DatasetCollections {
  datasets: Collection<DatasetDoc>;
  items: Collection<DatasetItemDoc>;
  versions: Collection<DatasetVersionDoc>;
}

export function datasetCollections(store: Store): DatasetCollections {
  return {
    datasets: store.collection<DatasetDoc>("datasets"),
    items: store.collection<DatasetItemDoc>("dataset_items"),
    versions: store.collection<DatasetVersionDoc>("dataset_versions"),
  };
}

export async function ensureDatasetIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("datasets", [{ keys: { organizationId: 1, _id: -1 } }]);
  // Not {datasetId, _id}: the SQLite store answers nothing for `_id: {$gt}` through an index naming
  // `_id` (a page after the first, oldest first); this one pages in `_id` order on every store.
  await store.ensureIndexes("dataset_items", [{ keys: { datasetId: 1 } }, { keys: { organizationId: 1 } }]);
  await store.ensureIndexes("dataset_versions", [{ keys: { datasetId: 1 } }]);
}
