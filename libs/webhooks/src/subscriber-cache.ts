import { type CallCache, createCallCache } from "@kiln/kit/call-cache";
import type { WebhookDoc } from "./store.js";

/**
 * How long a dispatcher reuses an organization's webhooks for fan-out. Every run is an event, and
 * reading the webhooks per event was the whole per-run cost of the evaluation process (on FerretDB
 * a scan of every webhook, pushed down only by `_id`). A change made through this process applies
 * at once; one made through another replica within this time. Deliveries read their webhook again
 * before each attempt, so a disabled or deleted webhook is never called.
 */
export const SUBSCRIBERS_TTL_MS = 1_000;

/** Organization id → its webhooks, shared by the dispatchers of one process. */
export type SubscriberCache = CallCache<WebhookDoc[]>;

export const createSubscriberCache = (): SubscriberCache =>
  createCallCache<WebhookDoc[]>({ max: 10_000, ttl: SUBSCRIBERS_TTL_MS });
