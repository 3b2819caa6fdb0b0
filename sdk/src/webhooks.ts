import type { ListQuery, PaginatedList } from "./paginated-list.js";
import type { Query, RequestBody, Webhook, WebhookDelivery, WebhookWithSecret } from "./resources.js";
import type { CallInit, IdempotentRequestOptions, RequestOptions, Transport } from "./transport.js";

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
    const send = (init: CallInit, wire: Query<"listWebhooks">) =>
      this.t.api.GET("/api/webhooks", { ...init, params: { query: wire } });
    return this.t.page(query, send, options);
  }

  get(id: string, options?: RequestOptions): Promise<Webhook> {
    return this.t.withId(id, (init) => this.t.api.GET("/api/webhooks/{id}", { ...init }), options);
  }

  /** `status: "enabled"` re-enables a webhook the platform disabled (see `disabledReason`). */
  update(id: string, body: RequestBody<"updateWebhook">, options?: RequestOptions): Promise<Webhook> {
    return this.t.withId(id, (init) => this.t.api.PATCH("/api/webhooks/{id}", { ...init, body }), options);
  }

  delete(id: string, options?: RequestOptions): Promise<Webhook> {
    return this.t.withId(id, (init) => this.t.api.DELETE("/api/webhooks/{id}", { ...init }), options);
  }

  /** A new secret; the old one keeps signing beside it for 24 hours. */
  rotateSecret(id: string, options?: RequestOptions): Promise<WebhookWithSecret> {
    return this.t.withId(id, (init) => this.t.api.POST("/api/webhooks/{id}/rotate-secret", { ...init }), options);
  }

  /** Sends a webhook.test event now and answers the delivery with its attempt. */
  test(id: string, options?: RequestOptions): Promise<WebhookDelivery> {
    return this.t.withId(id, (init) => this.t.api.POST("/api/webhooks/{id}/test", { ...init }), options);
  }

  /** The webhook's deliveries, newest first, each with every attempt. */
  deliveries(
    id: string,
    query: ListQuery<Query<"listWebhookDeliveries">> = {},
    options?: RequestOptions,
  ): PaginatedList<WebhookDelivery> {
    const path = "/api/webhooks/{id}/deliveries";
    const send = (init: CallInit, wire: Query<"listWebhookDeliveries">) =>
      this.t.api.GET(path, { ...init, params: { path: { id }, query: wire } });
    return this.t.page(query, send, options);
  }

  /** Queues a delivery again, with the same webhook-id and body. */
  redeliver(id: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDelivery> {
    const params = { path: { id, deliveryId } };
    const path = "/api/webhooks/{id}/deliveries/{deliveryId}/redeliver";
    return this.t.call((init) => this.t.api.POST(path, { ...init, params }), options);
  }
}
