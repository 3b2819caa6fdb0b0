import type { ListQuery, PaginatedList } from "./paginated-list.js";
import type { Dataset, DatasetItem, Query, RequestBody } from "./resources.js";
import type { CallInit, IdempotentRequestOptions, RequestOptions, Transport } from "./transport.js";

/**
 * Datasets (public beta, docs/datasets.md): versioned sets of items (input variables, expected
 * output, metadata) that evaluations run on. Every change of items makes a new version;
 * `items(id, {version})` reads any version as it was.
 */
export class Datasets {
  constructor(private readonly t: Transport) {}

  create(body: RequestBody<"createDataset">, options?: IdempotentRequestOptions): Promise<Dataset> {
    return this.t.call((init) => this.t.api.POST("/api/datasets", { ...init, body }), options, true);
  }

  list(query: ListQuery<Query<"listDatasets">> = {}, options?: RequestOptions): PaginatedList<Dataset> {
    const send = (init: CallInit, wire: Query<"listDatasets">) =>
      this.t.api.GET("/api/datasets", { ...init, params: { query: wire } });
    return this.t.page(query, send, options);
  }

  get(id: string, options?: RequestOptions): Promise<Dataset> {
    return this.t.withId(id, (init) => this.t.api.GET("/api/datasets/{id}", { ...init }), options);
  }

  update(id: string, body: RequestBody<"updateDataset">, options?: RequestOptions): Promise<Dataset> {
    return this.t.withId(id, (init) => this.t.api.PATCH("/api/datasets/{id}", { ...init, body }), options);
  }

  delete(id: string, options?: RequestOptions): Promise<Dataset> {
    return this.t.withId(id, (init) => this.t.api.DELETE("/api/datasets/{id}", { ...init }), options);
  }

  /** Adds a batch of items: one new version, stored whole or not at all. */
  addItems(id: string, body: RequestBody<"addDatasetItems">, options?: IdempotentRequestOptions) {
    return this.t.withId(id, (init) => this.t.api.POST("/api/datasets/{id}/items", { ...init, body }), options, true);
  }

  /** The items of a version (default: the current one), in the order they were added. */
  items(
    id: string,
    query: ListQuery<Query<"listDatasetItems">> = {},
    options?: RequestOptions,
  ): PaginatedList<DatasetItem> {
    const send = (init: CallInit, wire: Query<"listDatasetItems">) =>
      this.t.api.GET("/api/datasets/{id}/items", { ...init, params: { path: { id }, query: wire } });
    return this.t.page(query, send, options);
  }

  /** Removes an item from the current version on (earlier versions keep it). */
  removeItem(id: string, itemId: string, options?: RequestOptions): Promise<DatasetItem> {
    const params = { path: { id, itemId } };
    return this.t.call((init) => this.t.api.DELETE("/api/datasets/{id}/items/{itemId}", { ...init, params }), options);
  }

  /** Imports a CSV or JSONL file's text (`{format, content}`): one version; a bad row imports nothing. */
  import(id: string, body: RequestBody<"importDatasetItems">, options?: IdempotentRequestOptions) {
    return this.t.withId(id, (init) => this.t.api.POST("/api/datasets/{id}/import", { ...init, body }), options, true);
  }

  /** Copies evaluation cases, runs and annotation-queue items of the organization into the dataset. */
  addFrom(id: string, body: RequestBody<"addDatasetItemsFrom">, options?: IdempotentRequestOptions) {
    return this.t.withId(
      id,
      (init) => this.t.api.POST("/api/datasets/{id}/items/from", { ...init, body }),
      options,
      true,
    );
  }
}
