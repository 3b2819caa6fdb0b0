/**
 * What the webhooks keep and for how long (docs/webhooks.md "Retention"): deliveries go a
 * retention period after their last activity, and every stored signing secret is sealed under the
 * current secret key (plaintext from before encryption, or sealed under a previous key).
 */
import type { SecretBox } from "@kiln/kit/secret-box";
import type { WebhookCollections } from "./store.js";

/** How long a delivery is kept after it was made or last redelivered (WEBHOOK_DELIVERY_RETENTION_DAYS). */
export const DEFAULT_DELIVERY_RETENTION_MS = 30 * 24 * 3_600_000;

/**
 * Deletes the deliveries made and last redelivered before `cutoff` that are no longer pending;
 * resolves to how many went. A pending delivery is never deleted: its retries end a day after
 * `retryFrom` and it is then kept the whole period like any other.
 */
export async function sweepDeliveries(collections: WebhookCollections, cutoff: Date): Promise<number> {
  const { deletedCount } = await collections.deliveries.deleteMany({
    createdAt: { $lt: cutoff },
    retryFrom: { $lt: cutoff },
    status: { $ne: "pending" },
  });
  return deletedCount;
}

/** The stored form of a secret under the current key: as it is when it already is. */
export function resealed(secrets: SecretBox, stored: string, context: string): string {
  return secrets.isCurrent(stored) ? stored : secrets.seal(secrets.open(stored, context), context);
}

/**
 * Re-seals every webhook secret not sealed under the current key; resolves to how many webhooks
 * changed. Each write is conditional on the values read, so replicas starting together, or a
 * rotation meanwhile, never lose a secret: the one that loses the race leaves it as the winner wrote it.
 */
export async function resealSecrets(collections: WebhookCollections, secrets: SecretBox): Promise<number> {
  const webhooks = await collections.webhooks.find({}, { projection: { _id: 1, secret: 1, previousSecret: 1 } });
  let changed = 0;
  for (const w of webhooks) {
    const stale = !secrets.isCurrent(w.secret) || (w.previousSecret !== null && !secrets.isCurrent(w.previousSecret));
    if (!stale) continue;
    const { modifiedCount } = await collections.webhooks.updateOne(
      { _id: w._id, secret: w.secret, previousSecret: w.previousSecret },
      {
        $set: {
          secret: resealed(secrets, w.secret, w._id),
          previousSecret: w.previousSecret === null ? null : resealed(secrets, w.previousSecret, w._id),
        },
      },
    );
    changed += modifiedCount;
  }
  return changed;
}
