/**
 * Webhooks (docs/webhooks.md), a library with no process of its own: endpoints, their deliveries,
 * and the dispatchers. The evaluation process hosts the RPC service beside its own (asynchronous
 * work lives there), and every process that runs evaluation workers runs a dispatcher: scale the
 * workers to scale delivery.
 */

import type { ConnectRouter } from "@connectrpc/connect";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import type { Bus } from "@kiln/kit/bus";
import type { Logger } from "@kiln/kit/logger";
import { type ResolveHost, resolveWithDns } from "@kiln/kit/outbound";
import type { HostPattern } from "@kiln/kit/outbound/host-patterns";
import type { SecretBox } from "@kiln/kit/secret-box";
import type { Store } from "@kiln/kit/store";
import { startSweeper } from "@kiln/kit/sweeper";
import { createDispatcher, type Dispatcher } from "./dispatcher.js";
import { DEFAULT_DELIVERY_RETENTION_MS, resealSecrets, sweepDeliveries } from "./retention.js";
import { DEFAULT_RETRY, type RetryPolicy } from "./retry-policy.js";
import { registerWebhookRpc } from "./rpc.js";
import { ensureWebhookIndexes, webhookCollections } from "./store.js";
import { createSubscriberCache, type SubscriberCache } from "./subscriber-cache.js";
import { createWebhooks } from "./webhooks.js";

export { type Dispatcher, WEBHOOKS_STREAM } from "./dispatcher.js";
export { WEBHOOK_EVENTS } from "./events.js";
export { DEFAULT_DELIVERY_RETENTION_MS, resealSecrets, sweepDeliveries } from "./retention.js";
export { backoffMs, DEFAULT_RETRY, type RetryPolicy } from "./retry-policy.js";

/** What a create answers once: an Idempotency-Key replay answers the webhook without it. */
export const WEBHOOK_SECRET_FIELDS = { "/kiln.webhooks.v1.WebhookService/CreateWebhook": ["secret"] } as const;
export { sign, signatureHeader, verify } from "./signing.js";

export interface WebhookOptions {
  /** Host patterns webhook URLs may resolve to private addresses for (WEBHOOK_PRIVATE_HOSTS); default none. */
  privateHosts?: readonly HostPattern[];
  /** Deadline of one attempt, at most 10 s (default 10 s). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Ack wait of the delivery queue and lease of an attempt (default 30 s). */
  ackWaitMs?: number;
  resolve?: ResolveHost;
  /** Seals the signing secrets at rest (KILN_SECRET_KEY, or the embedded data directory's key). */
  secrets: SecretBox;
  /** How long deliveries are kept after their last activity (WEBHOOK_DELIVERY_RETENTION_DAYS); default 30 days. */
  deliveryRetentionMs?: number;
  /** Between two sweeps of expired deliveries; default one hour. */
  sweepIntervalMs?: number;
  now?: () => Date;
}

export interface WebhookDeps {
  store: Store;
  bus: Bus;
  logger: Logger;
  options: WebhookOptions;
}

/**
 * One cache of webhooks per organization for every dispatcher on a store (the evaluation process
 * runs the RPC service's and its workers' own): a change made through the RPC service reaches the
 * dispatcher that fans out at once.
 */
const subscriberCaches = new WeakMap<Store, SubscriberCache>();

function subscribersOf(store: Store): SubscriberCache {
  let cache = subscriberCaches.get(store);
  if (!cache) {
    cache = createSubscriberCache();
    subscriberCaches.set(store, cache);
  }
  return cache;
}

async function dispatcherOf(deps: WebhookDeps) {
  await ensureWebhookIndexes(deps.store);
  const o = deps.options;
  const now = o.now ?? (() => new Date());
  const collections = webhookCollections(deps.store);
  const dispatcher = createDispatcher({
    collections,
    bus: deps.bus,
    logger: deps.logger,
    delivery: {
      privateHosts: o.privateHosts ?? [],
      resolve: o.resolve ?? resolveWithDns,
      timeoutMs: o.timeoutMs ?? 10_000,
      now,
      secrets: o.secrets,
    },
    retry: { ...DEFAULT_RETRY, ...o.retry },
    ackWaitMs: o.ackWaitMs,
    subscribers: subscribersOf(deps.store),
  });
  return { collections, dispatcher, now, privateHosts: o.privateHosts ?? [] };
}

/** A dispatcher alone (worker processes). */
export async function createWebhookDispatcher(deps: WebhookDeps): Promise<Dispatcher> {
  return (await dispatcherOf(deps)).dispatcher;
}

/**
 * The RPC service and this process's dispatcher (started by the caller). Every secret not sealed
 * under the current key is re-sealed before it serves, and expired deliveries are swept until close().
 */
export async function createWebhookModule(deps: WebhookDeps & { identityAuth: IdentityAuth }) {
  const { collections, dispatcher, now, privateHosts } = await dispatcherOf(deps);
  const secrets = deps.options.secrets;
  const resealed = await resealSecrets(collections, secrets);
  if (resealed > 0) deps.logger.info({ webhooks: resealed }, "webhook secrets re-sealed under the current secret key");
  const retentionMs = deps.options.deliveryRetentionMs ?? DEFAULT_DELIVERY_RETENTION_MS;
  const sweeper = startSweeper({
    logger: deps.logger,
    what: "webhook deliveries",
    intervalMs: deps.options.sweepIntervalMs,
    sweep: () => sweepDeliveries(collections, new Date(now().getTime() - retentionMs)),
  });
  const webhooks = createWebhooks({
    collections,
    identityAuth: deps.identityAuth,
    dispatcher,
    privateHosts,
    secrets,
    now,
  });
  return {
    dispatcher,
    register: (router: ConnectRouter) => registerWebhookRpc(router, webhooks),
    /** One sweep now; resolves to how many deliveries went. */
    sweepDeliveries: () => sweeper.runOnce(),
    close: () => sweeper.stop(),
  };
}
