import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { Body, errorResponses, IdempotencyHeaders, List, ListQuery, OneOf, ref } from "../schemas.js";
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

const tags = ["webhooks"];
const config = { stability: "beta" as const };
const DeliveryParams = Type.Object({ id: Id, deliveryId: Id });

/** Webhooks (docs/webhooks.md; issue #17): endpoints, secrets, tests, deliveries. */
export function registerWebhookRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { webhooks } = deps.clients;

  app.post(
    "/api/webhooks",
    {
      config,
      schema: {
        tags,
        operationId: "createWebhook",
        summary: "Create a webhook; its secret is answered once",
        headers: IdempotencyHeaders,
        body: Body({
          organizationId: Type.Optional(OrganizationId),
          url: Url,
          events: Type.Array(EventName, { minItems: 1, maxItems: EVENTS.length, uniqueItems: true }),
          description: Type.Optional(Description),
        }),
        response: { 201: ref(WebhookWithSecretView), ...errorResponses(400, 401, 403, 404) },
      },
    },
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
    {
      config,
      schema: {
        tags,
        operationId: "listWebhooks",
        summary: "An organization's webhooks, newest first",
        querystring: Type.Object({ organizationId: Type.Optional(OrganizationId), ...ListQuery }),
        response: { 200: List(ref(WebhookView)), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const q = request.query;
      const r = await webhooks.listWebhooks(
        {
          organizationId: organizationOf(request, q.organizationId),
          limit: q.limit ? Number(q.limit) : 0,
          cursor: q.cursor ?? "",
        },
        rpcOptions(request),
      );
      return { data: r.webhooks.map(webhookView), nextCursor: r.nextCursor || null };
    },
  );

  app.get(
    "/api/webhooks/:id",
    {
      config,
      schema: {
        tags,
        operationId: "getWebhook",
        summary: "A webhook (never its secret); a disabled one says why",
        params: IdParams,
        response: { 200: ref(WebhookView), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => webhookView((await webhooks.getWebhook({ id: request.params.id }, rpcOptions(request))).webhook),
  );

  app.patch(
    "/api/webhooks/:id",
    {
      config,
      schema: {
        tags,
        operationId: "updateWebhook",
        summary: "Change a webhook's URL, events or description; status enabled re-enables a disabled one",
        params: IdParams,
        body: Body({
          url: Type.Optional(Url),
          events: Type.Optional(Type.Array(EventName, { minItems: 1, maxItems: EVENTS.length, uniqueItems: true })),
          description: Type.Optional(Description),
          status: Type.Optional(OneOf(["enabled", "disabled"])),
        }),
        response: { 200: ref(WebhookView), ...errorResponses(400, 401, 403, 404) },
      },
    },
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
    {
      config,
      schema: {
        tags,
        operationId: "deleteWebhook",
        summary: "Delete a webhook and its deliveries; answers it as it was",
        params: IdParams,
        response: { 200: ref(WebhookView), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      webhookView((await webhooks.deleteWebhook({ id: request.params.id }, rpcOptions(request))).webhook),
  );

  app.post(
    "/api/webhooks/:id/rotate-secret",
    {
      config,
      schema: {
        tags,
        operationId: "rotateWebhookSecret",
        summary: "A new secret, answered once; the old one keeps signing beside it for 24 hours",
        params: IdParams,
        response: { 200: ref(WebhookWithSecretView), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const r = await webhooks.rotateWebhookSecret({ id: request.params.id }, rpcOptions(request));
      return { ...webhookView(r.webhook), secret: r.secret };
    },
  );

  app.post(
    "/api/webhooks/:id/test",
    {
      config,
      schema: {
        tags,
        operationId: "testWebhook",
        summary: "Send a webhook.test event now; answers the delivery with its attempt (not retried)",
        params: IdParams,
        response: { 200: ref(DeliveryView), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      deliveryView((await webhooks.testWebhook({ id: request.params.id }, rpcOptions(request))).delivery),
  );

  app.get(
    "/api/webhooks/:id/deliveries",
    {
      config,
      schema: {
        tags,
        operationId: "listWebhookDeliveries",
        summary: "A webhook's deliveries, newest first, each with every attempt",
        params: IdParams,
        querystring: Type.Object(ListQuery),
        response: { 200: List(ref(DeliveryView)), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const r = await webhooks.listDeliveries(
        {
          webhookId: request.params.id,
          limit: request.query.limit ? Number(request.query.limit) : 0,
          cursor: request.query.cursor ?? "",
        },
        rpcOptions(request),
      );
      return { data: r.deliveries.map(deliveryView), nextCursor: r.nextCursor || null };
    },
  );

  app.post(
    "/api/webhooks/:id/deliveries/:deliveryId/redeliver",
    {
      config,
      schema: {
        tags,
        operationId: "redeliverWebhookDelivery",
        summary: "Queue a delivery again (same webhook-id and body); answers 202 with it pending",
        params: DeliveryParams,
        response: { 202: ref(DeliveryView), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const r = await webhooks.redeliver(
        { webhookId: request.params.id, deliveryId: request.params.deliveryId },
        rpcOptions(request),
      );
      return reply.code(202).send(deliveryView(r.delivery));
    },
  );
}
