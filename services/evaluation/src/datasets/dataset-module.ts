/**
 * Datasets (docs/datasets.md), hosted by the evaluation process beside the EvaluationService: the
 * DatasetService RPCs, and what an evaluation run on a dataset reads of it.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import type { Logger } from "@kiln/kit/logger";
import type { Store } from "@kiln/kit/store";
import type { Access } from "../access.js";
import type { RunReader } from "../review/item-content.js";
import { reviewCollections } from "../review/review-store.js";
import { evaluationCollections } from "../store/evaluation-store.js";
import { createDatasetItems } from "./dataset-items.js";
import { registerDatasetRpc } from "./dataset-rpc.js";
import { datasetCollections, ensureDatasetIndexes } from "./dataset-store.js";
import { createDatasets } from "./datasets.js";
import { createItemSources } from "./item-sources.js";

export interface DatasetModuleDeps {
  store: Store;
  access: Access;
  /** The execution service, where runs copied into a dataset are read. */
  runs: RunReader;
  now: () => Date;
  logger: Logger;
}

export async function createDatasetModule(deps: DatasetModuleDeps) {
  await ensureDatasetIndexes(deps.store);
  const collections = datasetCollections(deps.store);
  const datasets = createDatasets({ collections, access: deps.access, now: deps.now, logger: deps.logger });
  const sources = createItemSources({
    cases: evaluationCollections(deps.store).cases,
    annotationItems: reviewCollections(deps.store).items,
    runs: deps.runs,
  });
  const items = createDatasetItems({ collections, datasets, sources, now: deps.now });
  return {
    register: (router: ConnectRouter) => registerDatasetRpc(router, { datasets, items }),
    itemIdsAt: items.itemIdsAt,
  };
}

export type DatasetModule = Awaited<ReturnType<typeof createDatasetModule>>;
