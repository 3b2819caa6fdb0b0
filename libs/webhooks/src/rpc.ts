import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { unauthenticated } from "@kiln/kit/errors";
import { kPrincipal, type Principal } from "@kiln/kit/principal";
import { WebhookService } from "@kiln/proto/webhooks";
import type { DeliveryDoc, WebhookDoc } from "./store.js";
import type { Webhooks } from "./webhooks.js";

function principalOf(ctx: HandlerContext): Principal {
  const p = ctx.values.get(kPrincipal);
  if (!p) throw unauthenticated("missing credentials");
  return p;
}

/** Never the secret. */
export const webhookToProto = (w: WebhookDoc) => ({
  id: w._id,
  organizationId: w.organizationId,
  url: w.url,
  events: w.events,
  description: w.description,
  status: w.status,
  disabledReason: w.disabledReason,
  failingSince: w.failingSince ? timestampFromDate(w.failingSince) : undefined,
  createdAt: timestampFromDate(w.createdAt),
  updatedAt: timestampFromDate(w.updatedAt),
});

export const deliveryToProto = (d: DeliveryDoc) => ({
  id: d._id,
  webhookId: d.webhookId,
  eventId: d.eventId,
  eventType: d.eventType,
  status: d.status,
  attempts: d.attempts.map((a) => ({
    at: timestampFromDate(a.at),
    status: a.status,
    responseCode: a.responseCode,
    durationMs: BigInt(a.durationMs),
    error: a.error,
  })),
  nextAttemptAt: d.nextAttemptAt ? timestampFromDate(d.nextAttemptAt) : undefined,
  createdAt: timestampFromDate(d.createdAt),
});

export function registerWebhookRpc(router: ConnectRouter, webhooks: Webhooks): void {
  router.service(WebhookService, {
    async createWebhook(req, ctx) {
      const r = await webhooks.createWebhook(principalOf(ctx), req);
      return { webhook: webhookToProto(r.webhook), secret: r.secret };
    },
    async getWebhook(req, ctx) {
      return { webhook: webhookToProto(await webhooks.getWebhook(principalOf(ctx), req.id)) };
    },
    async listWebhooks(req, ctx) {
      const page = await webhooks.listWebhooks(principalOf(ctx), req);
      return { webhooks: page.items.map(webhookToProto), nextCursor: page.nextCursor };
    },
    async updateWebhook(req, ctx) {
      const updated = await webhooks.updateWebhook(principalOf(ctx), {
        id: req.id,
        url: req.url,
        events: req.setEvents ? req.events : undefined,
        description: req.description,
        status: req.status,
      });
      return { webhook: webhookToProto(updated) };
    },
    async deleteWebhook(req, ctx) {
      return { webhook: webhookToProto(await webhooks.deleteWebhook(principalOf(ctx), req.id)) };
    },
    async rotateWebhookSecret(req, ctx) {
      const r = await webhooks.rotateSecret(principalOf(ctx), req.id);
      return { webhook: webhookToProto(r.webhook), secret: r.secret };
    },
    async testWebhook(req, ctx) {
      return { delivery: deliveryToProto(await webhooks.testWebhook(principalOf(ctx), req.id)) };
    },
    async listDeliveries(req, ctx) {
      const page = await webhooks.listDeliveries(principalOf(ctx), req);
      return { deliveries: page.items.map(deliveryToProto), nextCursor: page.nextCursor };
    },
    async redeliver(req, ctx) {
      return { delivery: deliveryToProto(await webhooks.redeliver(principalOf(ctx), req)) };
    },
  });
}
