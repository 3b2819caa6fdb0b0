/**
 * Webhook endpoints and their deliveries (docs/webhooks.md). Reads need `webhooks:read`, changes
 * `webhooks:write` (API keys); users read as members and change as owners or admins. A secret is
 * answered when it is made (create, rotate) and never again.
 */

import { authorizeOnResource, type IdentityAuth } from "@kiln/kit/authorizer";
import { invalidArgument, notFound, permissionDenied } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import type { HostPattern } from "@kiln/kit/outbound/host-patterns";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import type { SecretBox } from "@kiln/kit/secret-box";
import type { Dispatcher } from "./dispatcher.js";
import { WEBHOOK_EVENTS } from "./events.js";
import { resealed } from "./retention.js";
import { newSecret } from "./signing.js";
import type { DeliveryDoc, WebhookCollections, WebhookDoc } from "./store.js";
import { type UrlIssue, urlIssues } from "./url-policy.js";

export const SCOPES = { read: "webhooks:read", write: "webhooks:write" } as const;

/** How long a rotated secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export interface WebhooksDeps {
  collections: WebhookCollections;
  identityAuth: IdentityAuth;
  dispatcher: Dispatcher;
  /** Host patterns allowed private addresses (WEBHOOK_PRIVATE_HOSTS). */
  privateHosts: readonly HostPattern[];
  /** Seals the signing secrets before they are stored. */
  secrets: SecretBox;
  now: () => Date;
}

type Issue = UrlIssue;

function eventIssues(events: readonly string[]): Issue[] {
  const issues: Issue[] = [];
  if (events.length === 0) issues.push({ field: "events", issue: "must name at least one event" });
  events.forEach((e, i) => {
    if (!(WEBHOOK_EVENTS as readonly string[]).includes(e))
      issues.push({ field: `events[${i}]`, issue: `must be one of ${WEBHOOK_EVENTS.join(", ")}` });
  });
  return issues;
}

export type Webhooks = ReturnType<typeof createWebhooks>;

export function createWebhooks(deps: WebhooksDeps) {
  const c = deps.collections;

  async function authorize(principal: Principal, organizationId: string, write: boolean, what = "webhook") {
    const decision = await authorizeOnResource(deps.identityAuth, principal, {
      organizationId,
      scope: write ? SCOPES.write : SCOPES.read,
      what,
      requireAi: false,
    });
    if (write && principal.type === "user" && decision.role !== "owner" && decision.role !== "admin") {
      throw permissionDenied("only organization owners and admins manage webhooks");
    }
  }

  async function webhookFor(principal: Principal, id: string, write: boolean): Promise<WebhookDoc> {
    const webhook = id === "" ? null : await c.webhooks.findOne({ _id: id });
    if (!webhook) throw notFound("webhook");
    await authorize(principal, webhook.organizationId, write);
    return webhook;
  }

  return {
    async createWebhook(
      principal: Principal,
      input: { organizationId: string; url: string; events: string[]; description: string },
    ) {
      if (input.organizationId === "")
        throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
      const issues = [...urlIssues(input.url, deps.privateHosts), ...eventIssues(input.events)];
      if (input.description.length > 2_000)
        issues.push({ field: "description", issue: "must be at most 2000 characters" });
      if (issues.length > 0) throw invalidArgument("invalid webhook", issues);
      await authorize(principal, input.organizationId, true, "organization");
      const at = deps.now();
      const secret = newSecret();
      const id = newId("whk");
      const webhook: WebhookDoc = {
        _id: id,
        organizationId: input.organizationId,
        url: input.url,
        events: [...new Set(input.events)],
        description: input.description,
        status: "enabled",
        disabledReason: "",
        failingSince: null,
        secret: deps.secrets.seal(secret, id),
        previousSecret: null,
        previousSecretUntil: null,
        createdAt: at,
        updatedAt: at,
      };
      await c.webhooks.insertOne(webhook);
      deps.dispatcher.forget(webhook.organizationId);
      return { webhook, secret };
    },

    getWebhook: (principal: Principal, id: string) => webhookFor(principal, id, false),

    async listWebhooks(principal: Principal, input: { organizationId: string; limit: number; cursor: string }) {
      if (input.organizationId === "")
        throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
      await authorize(principal, input.organizationId, false, "organization");
      return findPage(c.webhooks, { organizationId: input.organizationId }, input);
    },

    async updateWebhook(
      principal: Principal,
      input: { id: string; url?: string; events?: string[]; description?: string; status?: string },
    ) {
      const webhook = await webhookFor(principal, input.id, true);
      const issues: Issue[] = [];
      const set: Partial<WebhookDoc> = {};
      if (input.url !== undefined) {
        issues.push(...urlIssues(input.url, deps.privateHosts));
        set.url = input.url;
      }
      if (input.events !== undefined) {
        issues.push(...eventIssues(input.events));
        set.events = [...new Set(input.events)];
      }
      if (input.description !== undefined) set.description = input.description;
      if (input.status !== undefined) {
        if (input.status !== "enabled" && input.status !== "disabled")
          issues.push({ field: "status", issue: 'must be "enabled" or "disabled"' });
        set.status = input.status as WebhookDoc["status"];
        // Enabling starts afresh; pausing by hand says so.
        set.disabledReason = input.status === "disabled" ? "disabled by a user" : "";
        if (input.status === "enabled") set.failingSince = null;
      }
      if (issues.length > 0) throw invalidArgument("invalid webhook", issues);
      const updated = await c.webhooks.findOneAndUpdate(
        { _id: webhook._id },
        { $set: { ...set, updatedAt: deps.now() } },
      );
      deps.dispatcher.forget(webhook.organizationId);
      return updated ?? webhook;
    },

    /** Removes the webhook; its deliveries stay readable by id no more (they go with it). */
    async deleteWebhook(principal: Principal, id: string) {
      const webhook = await webhookFor(principal, id, true);
      await c.webhooks.deleteOne({ _id: webhook._id });
      deps.dispatcher.forget(webhook.organizationId);
      await c.deliveries.deleteMany({ webhookId: webhook._id });
      return webhook;
    },

    /** A new secret; the old one keeps signing beside it for a day, so receivers can switch. */
    async rotateSecret(principal: Principal, id: string) {
      const webhook = await webhookFor(principal, id, true);
      const at = deps.now();
      const secret = newSecret();
      const updated =
        (await c.webhooks.findOneAndUpdate(
          { _id: webhook._id },
          {
            $set: {
              secret: deps.secrets.seal(secret, webhook._id),
              previousSecret: resealed(deps.secrets, webhook.secret, webhook._id),
              previousSecretUntil: new Date(at.getTime() + ROTATION_OVERLAP_MS),
              updatedAt: at,
            },
          },
        )) ?? webhook;
      return { webhook: updated, secret };
    },

    /** Sends a `webhook.test` event now and answers the attempt (not retried in the background). */
    async testWebhook(principal: Principal, id: string): Promise<DeliveryDoc> {
      const webhook = await webhookFor(principal, id, true);
      const at = deps.now();
      const eventId = `webhook.test:${newId("dlv")}`;
      const delivery: DeliveryDoc = {
        _id: newId("dlv"),
        webhookId: webhook._id,
        organizationId: webhook.organizationId,
        eventId,
        eventType: "webhook.test",
        payload: JSON.stringify({
          id: eventId,
          type: "webhook.test",
          organizationId: webhook.organizationId,
          timestamp: at.toISOString(),
          data: { webhookId: webhook._id },
        }),
        status: "pending",
        attempts: [],
        nextAttemptAt: at,
        retryFrom: at,
        leaseUntil: new Date(at.getTime() + 30_000),
        createdAt: at,
      };
      await c.deliveries.insertOne(delivery);
      return deps.dispatcher.attemptNow(webhook, delivery);
    },

    async listDeliveries(principal: Principal, input: { webhookId: string; limit: number; cursor: string }) {
      const webhook = await webhookFor(principal, input.webhookId, false);
      return findPage(c.deliveries, { webhookId: webhook._id }, input);
    },

    /** Queues a delivery again (whatever its status), with the same webhook-id and body. */
    async redeliver(principal: Principal, input: { webhookId: string; deliveryId: string }) {
      const webhook = await webhookFor(principal, input.webhookId, true);
      const delivery = await c.deliveries.findOne({ _id: input.deliveryId, webhookId: webhook._id });
      if (!delivery) throw notFound("delivery");
      const at = deps.now();
      const queued =
        (await c.deliveries.findOneAndUpdate(
          { _id: delivery._id },
          { $set: { status: "pending", nextAttemptAt: at, retryFrom: at } },
        )) ?? delivery;
      await deps.dispatcher.enqueue(queued);
      return queued;
    },
  };
}
