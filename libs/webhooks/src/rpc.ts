import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { withPrincipal } from "@kiln/kit/principal";
import { WebhookService } from "@kiln/proto/webhooks";
import type { DeliveryDoc, WebhookDoc } from "./store.js";
import type { Webhooks } from "./webhooks.js";

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

/** The answers of the webhook RPCs: one webhook (with its secret, when just made), one delivery. */
const webhookAnswer = (w: WebhookDoc) => ({ webhook: webhookToProto(w) });
const secretAnswer = (r: { webhook: WebhookDoc; secret: string }) => ({
  ...webhookAnswer(r.webhook),
  secret: r.secret,
});
const deliveryAnswer = (d: DeliveryDoc) => ({ delivery: deliveryToProto(d) });

export function registerWebhookRpc(router: ConnectRouter, webhooks: Webhooks): void {
  router.service(WebhookService, {
    createWebhook: withPrincipal(async (p, req) => secretAnswer(await webhooks.createWebhook(p, req))),
    getWebhook: withPrincipal(async (p, req) => webhookAnswer(await webhooks.getWebhook(p, req.id))),
    listWebhooks: withPrincipal(async (p, req) => {
      const page = await webhooks.listWebhooks(p, req);
      return { webhooks: page.items.map(webhookToProto), nextCursor: page.nextCursor };
    }),
    updateWebhook: withPrincipal(async (p, req) =>
      webhookAnswer(
        await webhooks.updateWebhook(p, {
          id: req.id,
          url: req.url,
          events: req.setEvents ? req.events : undefined,
          description: req.description,
          status: req.status,
        }),
      ),
    ),
    deleteWebhook: withPrincipal(async (p, req) => webhookAnswer(await webhooks.deleteWebhook(p, req.id))),
    rotateWebhookSecret: withPrincipal(async (p, req) => secretAnswer(await webhooks.rotateSecret(p, req.id))),
    testWebhook: withPrincipal(async (p, req) => deliveryAnswer(await webhooks.testWebhook(p, req.id))),
    listDeliveries: withPrincipal(async (p, req) => {
      const page = await webhooks.listDeliveries(p, req);
      return { deliveries: page.items.map(deliveryToProto), nextCursor: page.nextCursor };
    }),
    redeliver: withPrincipal(async (p, req) => deliveryAnswer(await webhooks.redeliver(p, req))),
  });
}
