/**
 * The dispatchers (docs/webhooks.md "Delivery"): any number of processes share two kinds of
 * durable JetStream consumers.
 *
 * 1. Fan-out (`webhook-fanout` on RUNS, CATALOG, EVALUATION_EVENTS, USAGE_EVENTS): an event becomes one
 *    delivery per enabled webhook of its organization subscribed to its type, stored under a
 *    unique (webhook, event) key, so an event the bus delivers twice is one delivery; then one
 *    message per delivery on the WEBHOOKS work queue.
 * 2. Delivery (`webhook-dispatchers` on WEBHOOKS): a dispatcher leases the delivery (a
 *    conditional update: two replicas never attempt one delivery at once), attempts it, records
 *    the attempt, and either acknowledges (delivered, or given up after the retry window) or naks
 *    with the backoff delay (exponential with jitter, at least Retry-After), so the retry waits in
 *    JetStream, not in a process. A dispatcher killed mid-attempt never acknowledges: the message
 *    comes back after the ack wait and its lease has expired, so another dispatcher attempts again
 *    (the receiver de-duplicates by `webhook-id`).
 */
import { CONSUMERS, WORK_QUEUES } from "@kiln/contracts/bus-names";
import type { Bus, BusMessage, StreamSpec, Subscription } from "@kiln/kit/bus";
import { newId } from "@kiln/kit/ids";
import { retryStartupStep } from "@kiln/kit/lifecycle";
import type { Logger } from "@kiln/kit/logger";
import { isDuplicateKeyError } from "@kiln/kit/store";
import { attemptDelivery, type DeliveryOptions } from "./delivery.js";
import { SOURCES, type WebhookEvent, webhookEventOf } from "./events.js";
import { backoffMs, type RetryPolicy } from "./retry-policy.js";
import type { AttemptDoc, DeliveryDoc, WebhookCollections, WebhookDoc } from "./store.js";
import { createSubscriberCache, type SubscriberCache } from "./subscriber-cache.js";

export const WEBHOOKS_STREAM: StreamSpec = {
  name: WORK_QUEUES.webhooks.stream,
  subjects: [WORK_QUEUES.webhooks.subject],
  retention: "workqueue",
  duplicateWindowMs: 120_000,
};

const DELIVER = { stream: WORK_QUEUES.webhooks.stream, durable: CONSUMERS.webhookDispatchers };
const EPOCH = new Date(0);

export interface DispatcherDeps {
  collections: WebhookCollections;
  bus: Bus;
  logger: Logger;
  delivery: DeliveryOptions;
  retry: RetryPolicy;
  /** Ack wait of the delivery consumer, and the lease of an attempt (default 30 s). */
  ackWaitMs?: number;
  /** Deliveries attempted at once by this process (default 8). */
  concurrency?: number;
  /** The process's cache of webhooks per organization (default one of this dispatcher's own). */
  subscribers?: SubscriberCache;
}

export interface Dispatcher {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Queues a delivery for an attempt (new, or redelivered by hand). */
  enqueue(delivery: DeliveryDoc): Promise<void>;
  /** Attempts a delivery now, in this call (the test route); records it like any attempt. */
  attemptNow(webhook: WebhookDoc, delivery: DeliveryDoc): Promise<DeliveryDoc>;
  /** An organization's webhooks changed in this process: its next event reads them afresh. */
  forget(organizationId: string): void;
}

export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const c = deps.collections;
  const ackWaitMs = deps.ackWaitMs ?? 30_000;
  const now = deps.delivery.now;
  let subscriptions: Subscription[] = [];
  const subscribers = deps.subscribers ?? createSubscriberCache();

  const webhooksOf = (organizationId: string) =>
    subscribers.get(organizationId, () => c.webhooks.find({ organizationId }));

  const enqueue = async (delivery: DeliveryDoc) => {
    await deps.bus.publish(WORK_QUEUES.webhooks.subject, delivery._id, {
      msgId: `${delivery._id}:${delivery.attempts.length}:${delivery.status}`,
    });
  };

  /** One delivery per subscribed webhook, stored then queued; repeats find theirs and queue it again. */
  async function fanOut(event: WebhookEvent): Promise<void> {
    const webhooks = (await webhooksOf(event.organizationId)).filter(
      (w) => w.status === "enabled" && w.events.includes(event.type),
    );
    if (webhooks.length === 0) return;
    const payload = JSON.stringify({
      id: event.id,
      type: event.type,
      organizationId: event.organizationId,
      timestamp: event.timestamp,
      data: event.data,
    });
    for (const webhook of webhooks) {
      let delivery: DeliveryDoc = {
        _id: newId("dlv"),
        webhookId: webhook._id,
        organizationId: webhook.organizationId,
        eventId: event.id,
        eventType: event.type,
        payload,
        status: "pending",
        attempts: [],
        nextAttemptAt: now(),
        retryFrom: now(),
        leaseUntil: EPOCH,
        createdAt: now(),
      };
      try {
        await c.deliveries.insertOne(delivery);
      } catch (e) {
        if (!isDuplicateKeyError(e)) throw e;
        const existing = await c.deliveries.findOne({ webhookId: webhook._id, eventId: event.id });
        // Already delivered or given up: nothing to queue again.
        if (existing?.status !== "pending") continue;
        delivery = existing;
      }
      await enqueue(delivery);
    }
  }

  /** Records an attempt and what follows: the delivery's status, the webhook's failure streak. */
  async function record(webhook: WebhookDoc, delivery: DeliveryDoc, attempt: AttemptDoc, retryAfterMs?: number) {
    const attempts = [...delivery.attempts, attempt];
    const failed = attempts.filter((a) => a.status === "failed").length;
    let status: DeliveryDoc["status"] = "succeeded";
    let nextAttemptAt: Date | null = null;
    let delayMs = 0;
    if (attempt.status === "failed") {
      delayMs = Math.max(backoffMs(failed, deps.retry), retryAfterMs ?? 0);
      const next = attempt.at.getTime() + delayMs;
      if (next - delivery.retryFrom.getTime() > deps.retry.windowMs) status = "failed";
      else {
        status = "pending";
        nextAttemptAt = new Date(next);
      }
    }
    const updated = await c.deliveries.findOneAndUpdate(
      { _id: delivery._id },
      { $set: { attempts, status, nextAttemptAt, leaseUntil: EPOCH } },
    );
    await recordEndpointHealth(webhook, attempt);
    return { delivery: updated ?? { ...delivery, attempts, status, nextAttemptAt }, delayMs };
  }

  /** An endpoint that answers clears its failure streak; one failing for `disableAfterMs` is disabled. */
  async function recordEndpointHealth(webhook: WebhookDoc, attempt: AttemptDoc) {
    if (attempt.status === "succeeded") {
      if (webhook.failingSince !== null) {
        await c.webhooks.updateOne({ _id: webhook._id }, { $set: { failingSince: null } });
      }
      return;
    }
    const since = webhook.failingSince ?? attempt.at;
    if (webhook.failingSince === null) {
      await c.webhooks.updateOne({ _id: webhook._id, failingSince: null }, { $set: { failingSince: since } });
    }
    if (webhook.status === "enabled" && attempt.at.getTime() - since.getTime() >= deps.retry.disableAfterMs) {
      const reason = `disabled at ${attempt.at.toISOString()}: every delivery has failed since ${since.toISOString()} (last: ${attempt.error})`;
      await c.webhooks.updateOne(
        { _id: webhook._id, status: "enabled" },
        { $set: { status: "disabled", disabledReason: reason, updatedAt: attempt.at } },
      );
      subscribers.forget(webhook.organizationId);
      deps.logger.warn({ webhookId: webhook._id, organizationId: webhook.organizationId }, "webhook disabled");
    }
  }

  /** Leases a due delivery, or answers why not (done, held by another dispatcher). */
  async function lease(deliveryId: string): Promise<DeliveryDoc | "done" | "held"> {
    const at = now();
    const leased = await c.deliveries.findOneAndUpdate(
      { _id: deliveryId, status: "pending", leaseUntil: { $lte: at } },
      { $set: { leaseUntil: new Date(at.getTime() + ackWaitMs) } },
    );
    if (leased) return leased;
    const current = await c.deliveries.findOne({ _id: deliveryId });
    return current?.status !== "pending" ? "done" : "held";
  }

  async function deliver(msg: BusMessage): Promise<void> {
    const deliveryId = msg.string();
    const leased = await lease(deliveryId);
    if (leased === "done") return;
    if (leased === "held") {
      // Another dispatcher is attempting it; look again once its lease can have run out.
      msg.nak(ackWaitMs);
      return;
    }
    const due = leased.nextAttemptAt ? leased.nextAttemptAt.getTime() - now().getTime() : 0;
    if (due > 1_000) {
      // Delivered early (a redelivery of an older message): wait for the scheduled time.
      await c.deliveries.updateOne({ _id: leased._id }, { $set: { leaseUntil: EPOCH } });
      msg.nak(due);
      return;
    }
    const webhook = await c.webhooks.findOne({ _id: leased.webhookId });
    if (webhook?.status !== "enabled") {
      const why = webhook ? "the webhook is disabled" : "the webhook was deleted";
      await c.deliveries.updateOne(
        { _id: leased._id },
        {
          $set: {
            status: "failed",
            leaseUntil: EPOCH,
            nextAttemptAt: null,
            attempts: [
              ...leased.attempts,
              { at: now(), status: "failed", responseCode: 0, durationMs: 0, error: `not attempted: ${why}` },
            ],
          },
        },
      );
      return;
    }
    const outcome = await attemptDelivery(webhook, leased, deps.delivery);
    const { delivery, delayMs } = await record(webhook, leased, outcome.attempt, outcome.retryAfterMs);
    if (delivery.status === "pending") msg.nak(delayMs);
  }

  let stopped = false;
  const retries = new Set<NodeJS.Timeout>();

  /** Follows a source stream; one its service has not created yet is tried again every 2 s. */
  async function follow(source: (typeof SOURCES)[number]): Promise<void> {
    if (stopped) return;
    try {
      await deps.bus.ensureConsumer(source);
    } catch (err) {
      deps.logger.debug({ err, stream: source.stream }, "webhook fan-out waits for this stream");
      const timer = setTimeout(() => {
        retries.delete(timer);
        void follow(source);
      }, 2_000);
      timer.unref();
      retries.add(timer);
      return;
    }
    subscriptions.push(
      deps.bus.consume(
        source,
        async (msg) => {
          const event = webhookEventOf(msg);
          if (event) await fanOut(event);
        },
        {
          concurrency: 4,
          onError: (err, msg) => deps.logger.warn({ err, subject: msg.subject }, "webhook fan-out failed; retrying"),
        },
      ),
    );
  }

  return {
    async start() {
      stopped = false;
      await retryStartupStep(deps.logger, "the WEBHOOKS stream", () => deps.bus.ensureStream(WEBHOOKS_STREAM));
      await retryStartupStep(deps.logger, "the webhook dispatchers' consumer", () =>
        deps.bus.ensureConsumer({ ...DELIVER, ackWaitMs }),
      );
      for (const source of SOURCES) await follow(source);
      subscriptions.push(
        deps.bus.consume({ ...DELIVER, ackWaitMs }, deliver, {
          concurrency: deps.concurrency ?? 8,
          onError: (err) => deps.logger.warn({ err }, "webhook delivery failed; retrying"),
        }),
      );
    },
    async stop() {
      stopped = true;
      for (const timer of retries) clearTimeout(timer);
      retries.clear();
      const stopping = subscriptions;
      subscriptions = [];
      await Promise.all(stopping.map((s) => s.stop()));
    },
    enqueue,
    forget: (organizationId) => subscribers.forget(organizationId),
    async attemptNow(webhook, delivery) {
      const outcome = await attemptDelivery(webhook, delivery, deps.delivery);
      const recorded = await record(webhook, delivery, outcome.attempt, outcome.retryAfterMs);
      // A failed test is not retried in the background: it is a probe, answered at once.
      if (recorded.delivery.status === "pending") {
        return (
          (await c.deliveries.findOneAndUpdate(
            { _id: delivery._id },
            { $set: { status: "failed", nextAttemptAt: null } },
          )) ?? recorded.delivery
        );
      }
      return recorded.delivery;
    },
  };
}
