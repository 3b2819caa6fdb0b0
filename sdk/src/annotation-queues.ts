import type { ListQuery, PaginatedList } from "./paginated-list.js";
import type {
  AnnotationQueue,
  AnnotationQueueClaim,
  AnnotationQueueItem,
  AnnotationQueueItemWithContent,
  Query,
  RequestBody,
} from "./resources.js";
import type { CallInit, IdempotentRequestOptions, RequestOptions, Transport } from "./transport.js";

type ItemPath = { path: { id: string; itemId: string } };

/**
 * Human review (public beta, docs/review.md): annotation queues of runs and traces, reviewed one
 * item at a time. Reviewing (`next`, `review`, `skip`, `release`, `toCase`) needs a member's
 * access token; an API key may create queues, add items and read.
 */
export class AnnotationQueues {
  constructor(private readonly t: Transport) {}

  create(body: RequestBody<"createAnnotationQueue">, options?: IdempotentRequestOptions): Promise<AnnotationQueue> {
    return this.t.call((init) => this.t.api.POST("/api/annotation-queues", { ...init, body }), options, true);
  }

  list(query: ListQuery<Query<"listAnnotationQueues">> = {}, options?: RequestOptions): PaginatedList<AnnotationQueue> {
    const send = (init: CallInit, wire: Query<"listAnnotationQueues">) =>
      this.t.api.GET("/api/annotation-queues", { ...init, params: { query: wire } });
    return this.t.page(query, send, options);
  }

  /** The queue with its progress per status and per reviewer. */
  get(id: string, options?: RequestOptions): Promise<AnnotationQueue> {
    return this.t.withId(id, (init) => this.t.api.GET("/api/annotation-queues/{id}", { ...init }), options);
  }

  update(id: string, body: RequestBody<"updateAnnotationQueue">, options?: RequestOptions): Promise<AnnotationQueue> {
    return this.t.withId(id, (init) => this.t.api.PATCH("/api/annotation-queues/{id}", { ...init, body }), options);
  }

  delete(id: string, options?: RequestOptions): Promise<AnnotationQueue> {
    return this.t.withId(id, (init) => this.t.api.DELETE("/api/annotation-queues/{id}", { ...init }), options);
  }

  /** Adds runs and traces of the organization; ones already in the queue are counted in `skipped`. */
  addItems(id: string, body: RequestBody<"addAnnotationQueueItems">, options?: IdempotentRequestOptions) {
    return this.t.withId(
      id,
      (init) => this.t.api.POST("/api/annotation-queues/{id}/items", { ...init, body }),
      options,
      true,
    );
  }

  items(
    id: string,
    query: ListQuery<Query<"listAnnotationQueueItems">> = {},
    options?: RequestOptions,
  ): PaginatedList<AnnotationQueueItem> {
    const send = (init: CallInit, wire: Query<"listAnnotationQueueItems">) =>
      this.t.api.GET("/api/annotation-queues/{id}/items", { ...init, params: { path: { id }, query: wire } });
    return this.t.page(query, send, options);
  }

  /** Leases the next item to the caller (their own in review first); `item` null: nothing left. */
  next(id: string, options?: RequestOptions): Promise<AnnotationQueueClaim> {
    return this.t.withId(id, (init) => this.t.api.POST("/api/annotation-queues/{id}/next", { ...init }), options);
  }

  item(id: string, itemId: string, options?: RequestOptions): Promise<AnnotationQueueItemWithContent> {
    const params: ItemPath = { path: { id, itemId } };
    return this.t.call(
      (init) => this.t.api.GET("/api/annotation-queues/{id}/items/{itemId}", { ...init, params }),
      options,
    );
  }

  /** Scores and comments the item the caller holds; completes it. */
  review(
    id: string,
    itemId: string,
    body: RequestBody<"reviewAnnotationQueueItem">,
    options?: RequestOptions,
  ): Promise<AnnotationQueueItem> {
    const params: ItemPath = { path: { id, itemId } };
    const path = "/api/annotation-queues/{id}/items/{itemId}/review";
    return this.t.call((init) => this.t.api.POST(path, { ...init, params, body }), options);
  }

  skip(id: string, itemId: string, options?: RequestOptions): Promise<AnnotationQueueItem> {
    const params: ItemPath = { path: { id, itemId } };
    const path = "/api/annotation-queues/{id}/items/{itemId}/skip";
    return this.t.call((init) => this.t.api.POST(path, { ...init, params }), options);
  }

  /** Gives the item back: pending again. */
  release(id: string, itemId: string, options?: RequestOptions): Promise<AnnotationQueueItem> {
    const params: ItemPath = { path: { id, itemId } };
    const path = "/api/annotation-queues/{id}/items/{itemId}/release";
    return this.t.call((init) => this.t.api.POST(path, { ...init, params }), options);
  }

  /** Adds the item's run to a skill's evaluation cases; `expectedOutput` is the corrected output. */
  toCase(id: string, itemId: string, body: RequestBody<"createCaseFromAnnotationQueueItem">, options?: RequestOptions) {
    const params: ItemPath = { path: { id, itemId } };
    const path = "/api/annotation-queues/{id}/items/{itemId}/case";
    return this.t.call((init) => this.t.api.POST(path, { ...init, params, body }), options);
  }
}
