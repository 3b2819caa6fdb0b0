import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageById, pageOf } from "../http/list-page.js";
import { answers, listAnswers, operations, pageByIdSchema } from "../http/operation.js";
import { byId, rpcOptions } from "../http/request.js";
import { Body, errorResponses, IdempotencyHeaders, ListQuery, OneOf, ref } from "../schemas.js";
import { Id, IdParams, OrganizationId, organizationOf } from "./catalog-requests.js";
import {
  DeliveryView,
  Description,
  deliveryView,
  EVENTS,
  EventName,
  Url,
  WebhookView,
  WebhookWithSecretView,
  webhookView,
} from "./webhook-views.js";

const op = operations({ tags: ["webhooks"], stability: "beta" });
const DeliveryParams = Type.Object({ id: Id, deliveryId: Id });
const Events = Type.Array(EventName, { minItems: 1, maxItems: EVENTS.length, uniqueItems: true });

/** Webhooks (docs/webhooks.md; issue #17): endpoints, secrets, tests, deliveries. */
export function registerWebhookRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { webhooks } = deps.clients;

  app.post(
    "/api/webhooks",
    op("createWebhook", "Create a webhook; its secret is answered once", {
      headers: IdempotencyHeaders,
      body: Body({
        organizationId: Type.Optional(OrganizationId),
        url: Url,
        events: Events,
        description: Type.Optional(Description),
      }),
      response: { 201: ref(WebhookWithSecretView), ...errorResponses(400, 401, 403, 404) },
    }),
    async (request, reply) => {
      const b = request.body;
      const r = await webhooks.createWebhook(
        {
          organizationId: organizationOf(request, b.organizationId),
          url: b.url,
          events: b.events,
          description: b.description ?? "",
        },
        rpcOptions(request),
      );
      // A replay (Idempotent-Replayed: true) answers the webhook without its secret.
      return reply.code(201).send({ ...webhookView(r.webhook), ...(r.secret && { secret: r.secret }) });
    },
  );

  app.get(
    "/api/webhooks",
    op("listWebhooks", "An organization's webhooks, newest first", {
      querystring: Type.Object({ organizationId: Type.Optional(OrganizationId), ...ListQuery }),
      response: listAnswers(WebhookView, 400, 401, 403, 404),
    }),
    async (request) => {
      const q = request.query;
      const r = await webhooks.listWebhooks(
        { organizationId: organizationOf(request, q.organizationId), ...pageOf(q) },
        rpcOptions(request),
      );
      return listPage(r.webhooks, webhookView, r.nextCursor);
    },
  );

  app.get(
    "/api/webhooks/:id",
    op("getWebhook", "A webhook (never its secret); a disabled one says why", {
      params: IdParams,
      response: answers(WebhookView, 401, 403, 404),
    }),
    byId(webhooks.getWebhook, (r) => webhookView(r.webhook)),
  );

  app.patch(
    "/api/webhooks/:id",
    op("updateWebhook", "Change a webhook's URL, events or description; status enabled re-enables a disabled one", {
      params: IdParams,
      body: Body({
        url: Type.Optional(Url),
        events: Type.Optional(Events),
        description: Type.Optional(Description),
        status: Type.Optional(OneOf(["enabled", "disabled"])),
      }),
      response: answers(WebhookView, 400, 401, 403, 404),
    }),
    async (request) => {
      const b = request.body;
      const r = await webhooks.updateWebhook(
        {
          id: request.params.id,
          url: b.url,
          setEvents: b.events !== undefined,
          events: b.events ?? [],
          description: b.description,
          status: b.status,
        },
        rpcOptions(request),
      );
      return webhookView(r.webhook);
    },
  );

  app.delete(
    "/api/webhooks/:id",
    op("deleteWebhook", "Delete a webhook and its deliveries; answers it as it was", {
      params: IdParams,
      response: answers(WebhookView, 401, 403, 404),
    }),
    byId(webhooks.deleteWebhook, (r) => webhookView(r.webhook)),
  );

  app.post(
    "/api/webhooks/:id/rotate-secret",
    op("rotateWebhookSecret", "A new secret, answered once; the old one keeps signing beside it for 24 hours", {
      params: IdParams,
      response: answers(WebhookWithSecretView, 401, 403, 404),
    }),
    byId(webhooks.rotateWebhookSecret, (r) => ({ ...webhookView(r.webhook), secret: r.secret })),
  );

  app.post(
    "/api/webhooks/:id/test",
    op("testWebhook", "Send a webhook.test event now; answers the delivery with its attempt (not retried)", {
      params: IdParams,
      response: answers(DeliveryView, 401, 403, 404),
    }),
    byId(webhooks.testWebhook, (r) => deliveryView(r.delivery)),
  );

  app.get(
    "/api/webhooks/:id/deliveries",
    op(
      "listWebhookDeliveries",
      "A webhook's deliveries, newest first, each with every attempt",
      pageByIdSchema(DeliveryView, Type.Object(ListQuery)),
    ),
    pageById(webhooks.listDeliveries, "webhookId", "deliveries", deliveryView),
  );

  app.post(
    "/api/webhooks/:id/deliveries/:deliveryId/redeliver",
    op("redeliverWebhookDelivery", "Queue a delivery again (same webhook-id and body); answers 202 with it pending", {
      params: DeliveryParams,
      response: { 202: ref(DeliveryView), ...errorResponses(401, 403, 404) },
    }),
    async (request, reply) => {
      const r = await webhooks.redeliver(
        { webhookId: request.params.id, deliveryId: request.params.deliveryId },
        rpcOptions(request),
      );
      return reply.code(202).send(deliveryView(r.delivery));
    },
  );
}
