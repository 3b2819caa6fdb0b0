import { LIMITS } from "@kiln/kit/limits";
import type { Delivery, Webhook } from "@kiln/proto/webhooks";
import { WEBHOOK_EVENTS } from "@kiln/webhooks-lib/events";
import Type from "typebox";
import { Nullable, OneOf, ref, Timestamp } from "../schemas.js";
import { answersOf, iso } from "./views.js";

/** Webhook and delivery views (docs/webhooks.md) and their conversions from the webhooks service's messages. */

export const EVENTS = WEBHOOK_EVENTS;

export const EventName = OneOf(EVENTS);
export const Url = Type.String({
  minLength: 1,
  maxLength: LIMITS.webhookUrlChars,
  description: "http or https; public addresses only",
});
export const Description = Type.String({ maxLength: LIMITS.descriptionChars });

export const WebhookView = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    url: Type.String(),
    events: Type.Array(EventName),
    description: Type.String(),
    status: OneOf(["enabled", "disabled"]),
    disabledReason: Nullable(Type.String({ description: "why it was disabled; null while enabled" })),
    failingSince: Nullable(Timestamp, { description: "since when every delivery has failed" }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "Webhook", description: "never carries the secret" },
);

export const WebhookWithSecretView = Type.Object(
  {
    ...WebhookView.properties,
    secret: Type.Optional(
      Type.String({
        description:
          "whsec_…: shown once; sign checks use it (docs/webhooks.md). Absent from an Idempotency-Key replay of the create",
      }),
    ),
  },
  { $id: "WebhookWithSecret" },
);

export const DeliveryAttemptView = Type.Object(
  {
    at: Timestamp,
    status: OneOf(["succeeded", "failed"]),
    responseCode: Nullable(Type.Integer(), { description: "null when no HTTP answer came" }),
    durationMs: Type.Integer(),
    error: Nullable(Type.String()),
  },
  { $id: "DeliveryAttempt" },
);

export const DeliveryView = Type.Object(
  {
    id: Type.String({ description: "also the webhook-id header: receivers de-duplicate by it" }),
    webhookId: Type.String(),
    eventId: Type.String(),
    event: Type.String({ description: "the event type (webhook.test for test deliveries)" }),
    status: OneOf(["pending", "succeeded", "failed"]),
    responseCode: Nullable(Type.Integer({ description: "of the last attempt" })),
    durationMs: Nullable(Type.Integer({ description: "of the last attempt" })),
    nextAttemptAt: Nullable(Timestamp),
    attempts: Type.Array(ref(DeliveryAttemptView)),
    createdAt: Timestamp,
  },
  { $id: "Delivery" },
);

const fromWebhooks = answersOf("webhooks");

export const webhookView = fromWebhooks.view("webhook", (w: Webhook) => ({
  id: w.id,
  organizationId: w.organizationId,
  url: w.url,
  events: w.events as (typeof EVENTS)[number][],
  description: w.description,
  status: w.status as "enabled" | "disabled",
  disabledReason: w.disabledReason || null,
  failingSince: iso(w.failingSince),
  createdAt: iso(w.createdAt) ?? "",
  updatedAt: iso(w.updatedAt) ?? "",
}));

export const deliveryView = fromWebhooks.view("delivery", (d: Delivery) => {
  const attempts = d.attempts.map((a) => ({
    at: iso(a.at) ?? "",
    status: a.status as "succeeded" | "failed",
    responseCode: a.responseCode || null,
    durationMs: Number(a.durationMs),
    error: a.error || null,
  }));
  const last = attempts.at(-1);
  return {
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    event: d.eventType,
    status: d.status as "pending" | "succeeded" | "failed",
    responseCode: last?.responseCode ?? null,
    durationMs: last?.durationMs ?? null,
    nextAttemptAt: d.status === "pending" ? iso(d.nextAttemptAt) : null,
    attempts,
    createdAt: iso(d.createdAt) ?? "",
  };
});
