import { type ListQuery, PaginatedList, pageQuery } from "./paginated-list.js";
import type { Query, RequestBody, Webhook, WebhookDelivery, WebhookWithSecret } from "./resources.js";
import type { IdempotentRequestOptions, RequestOptions, Transport } from "./transport.js";

/**
 * Webhooks: signed callbacks for runs, publishes, label moves and evaluations (public beta). A
 * secret is answered by `create` and `rotateSecret` only; check signatures as docs/webhooks.md shows.
 */
export class Webhooks {
  constructor(private readonly t: Transport) {}

  create(body: RequestBody<"createWebhook">, options?: IdempotentRequestOptions): Promise<WebhookWithSecret> {
    return this.t.call((init) => this.t.api.POST("/api/webhooks", { ...init, body }), options, true);
  }

  list(query: ListQuery<Query<"listWebhooks">> = {}, options?: RequestOptions): PaginatedList<Webhook> {
    return new PaginatedList(
      (cursor) =>
        this.t.call(
          (init) => this.t.api.GET("/api/webhooks", { ...init, params: { query: pageQuery(query, cursor) } }),
          options,
        ),
      query.cursor,
    );
  }

  get(id: string, options?: RequestOptions): Promise<Webhook> {
    return this.t.call((init) => this.t.api.GET("/api/webhooks/{id}", { ...init, params: { path: { id } } }), options);
  }

  /** `status: "enabled"` re-enables a webhook the platform disabled (see `disabledReason`). */
  update(id: string, body: RequestBody<"updateWebhook">, options?: RequestOptions): Promise<Webhook> {
    return this.t.call(
      (init) => this.t.api.PATCH("/api/webhooks/{id}", { ...init, params: { path: { id } }, body }),
      options,
    );
  }

  delete(id: string, options?: RequestOptions): Promise<Webhook> {
    return this.t.call(
      (init) => this.t.api.DELETE("/api/webhooks/{id}", { ...init, params: { path: { id } } }),
      options,
    );
  }

  /** A new secret; the old one keeps signing beside it for 24 hours. */
  rotateSecret(id: string, options?: RequestOptions): Promise<WebhookWithSecret> {
    return this.t.call(
      (init) => this.t.api.POST("/api/webhooks/{id}/rotate-secret", { ...init, params: { path: { id } } }),
      options,
    );
  }

  /** Sends a webhook.test event now and answers the delivery with its attempt. */
  test(id: string, options?: RequestOptions): Promise<WebhookDelivery> {
    return this.t.call(
      (init) => this.t.api.POST("/api/webhooks/{id}/test", { ...init, params: { path: { id } } }),
      options,
    );
  }

  /** The webhook's deliveries, newest first, each with every attempt. */
  deliveries(
    id: string,
    query: ListQuery<Query<"listWebhookDeliveries">> = {},
    options?: RequestOptions,
  ): PaginatedList<WebhookDelivery> {
    return new PaginatedList(
      (cursor) =>
        this.t.call(
          (init) =>
            this.t.api.GET("/api/webhooks/{id}/deliveries", {
              ...init,
              params: { path: { id }, query: pageQuery(query, cursor) },
            }),
          options,
        ),
      query.cursor,
    );
  }

  /** Queues a delivery again, with the same webhook-id and body. */
  redeliver(id: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDelivery> {
    return this.t.call(
      (init) =>
        this.t.api.POST("/api/webhooks/{id}/deliveries/{deliveryId}/redeliver", {
          ...init,
          params: { path: { id, deliveryId } },
        }),
      options,
    );
  }
}
