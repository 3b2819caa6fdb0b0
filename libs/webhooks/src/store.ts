import type { Collection, Store } from "@kiln/kit/store";

export interface WebhookDoc {
  _id: string;
  organizationId: string;
  url: string;
  events: string[];
  description: string;
  status: "enabled" | "disabled";
  disabledReason: string;
  failingSince: Date | null;
  /**
   * Sealed with the platform's secret key (SecretBox, the webhook's id as context); plaintext in
   * documents written before encryption, re-sealed at the next start. Never answered after
   * creation or rotation.
   */
  secret: string;
  /** The secret before the last rotation (sealed likewise), still signing beside the new one until `previousSecretUntil`. */
  previousSecret: string | null;
  previousSecretUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface AttemptDoc {
  at: Date;
  status: "succeeded" | "failed";
  responseCode: number;
  durationMs: number;
  error: string;
}

/** One event for one webhook; unique per (webhookId, eventId), so an event redelivered by the bus is one delivery. */
export interface DeliveryDoc {
  _id: string;
  webhookId: string;
  organizationId: string;
  eventId: string;
  eventType: string;
  /** The exact body sent on every attempt (a redelivery sends the same bytes). */
  payload: string;
  status: "pending" | "succeeded" | "failed";
  attempts: AttemptDoc[];
  nextAttemptAt: Date | null;
  /** Retries stop a retry window after this (the first attempt, or a redelivery by hand). */
  retryFrom: Date;
  /** A dispatcher holds the delivery until then (an attempt in flight); epoch when free. */
  leaseUntil: Date;
  createdAt: Date;
}

export interface WebhookCollections {
  webhooks: Collection<WebhookDoc>;
  deliveries: Collection<DeliveryDoc>;
}

export function webhookCollections(store: Store): WebhookCollections {
  return { webhooks: store.collection("webhooks"), deliveries: store.collection("webhook_deliveries") };
}

export async function ensureWebhookIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("webhooks", [{ keys: { organizationId: 1, _id: -1 } }]);
  await store.ensureIndexes("webhook_deliveries", [
    { keys: { webhookId: 1, eventId: 1 }, unique: true },
    { keys: { webhookId: 1, _id: -1 } },
    // What the retention sweep reads by (docs/webhooks.md "Retention").
    { keys: { createdAt: 1 } },
  ]);
}
