/**
 * Retention and secrets at rest, on the embedded (SQLite) store: deliveries go 30 days (by
 * default) after their last activity, with a moved clock; the module re-seals plaintext secrets
 * (written before encryption) and those sealed under a previous key at start, and they still sign.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import { createLogger } from "@kiln/kit/logger";
import { createSecretBox, newSecretKey } from "@kiln/kit/secret-box";
import { createSqliteStore } from "@kiln/kit/store/sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { signingSecrets } from "./delivery.js";
import { createWebhookModule, type WebhookOptions } from "./index.js";
import { newSecret, signatureHeader, verify } from "./signing.js";
import { type DeliveryDoc, ensureWebhookIndexes, type WebhookDoc, webhookCollections } from "./store.js";

const DAY = 24 * 3_600_000;
const logger = createLogger({ name: "test", level: "silent" });
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Never asked here: these tests make no RPC call. */
const identityAuth: IdentityAuth = {
  verifyApiKey: () => Promise.reject(new Error("not in this test")),
  authorize: () => Promise.reject(new Error("not in this test")),
};

function sqliteStore() {
  const dir = mkdtempSync(join(tmpdir(), "kiln-webhooks-"));
  dirs.push(dir);
  return createSqliteStore({ path: join(dir, "store.db") });
}

const webhook = (id: string, secret: string, previousSecret: string | null = null): WebhookDoc => ({
  _id: id,
  organizationId: "org_1",
  url: "https://hooks.example.com/",
  events: ["label.moved"],
  description: "",
  status: "enabled",
  disabledReason: "",
  failingSince: null,
  secret,
  previousSecret,
  previousSecretUntil: previousSecret ? new Date(Date.now() + DAY) : null,
  createdAt: new Date(),
  updatedAt: new Date(),
});

const delivery = (id: string, createdAt: Date, status: DeliveryDoc["status"], retryFrom = createdAt): DeliveryDoc => ({
  _id: id,
  webhookId: "whk_1",
  organizationId: "org_1",
  eventId: `e-${id}`,
  eventType: "label.moved",
  payload: "{}",
  status,
  attempts: [],
  nextAttemptAt: null,
  retryFrom,
  leaseUntil: new Date(0),
  createdAt,
});

async function moduleOn(store: ReturnType<typeof sqliteStore>, given: Partial<WebhookOptions>) {
  const options = { secrets: createSecretBox({ current: newSecretKey(), previous: [] }), ...given };
  const bus = createMemoryBus();
  const module = await createWebhookModule({ store, bus, logger, identityAuth, options });
  return {
    module,
    close: async () => {
      await module.close();
      await bus.close();
    },
  };
}

describe("webhook delivery retention", () => {
  it("deletes deliveries 30 days after their last activity, never a pending one, and keeps younger ones", async () => {
    const store = sqliteStore();
    await ensureWebhookIndexes(store);
    const { deliveries } = webhookCollections(store);
    const t0 = new Date("2026-01-01T00:00:00Z");
    let now = t0;
    const at = (days: number) => new Date(t0.getTime() + days * DAY);
    await deliveries.insertMany([
      delivery("dlv_old", at(0), "succeeded"),
      delivery("dlv_failed", at(0), "failed"),
      delivery("dlv_redelivered", at(0), "succeeded", at(20)),
      delivery("dlv_pending", at(0), "pending"),
      delivery("dlv_young", at(10), "succeeded"),
    ]);
    const { module, close } = await moduleOn(store, { now: () => now });
    now = at(30);
    expect(await module.sweepDeliveries()).toBe(0);
    now = new Date(at(30).getTime() + 60_000);
    expect(await module.sweepDeliveries()).toBe(2);
    const left = async () => (await deliveries.find({}, { sort: { _id: 1 } })).map((d) => d._id);
    expect(await left()).toEqual(["dlv_pending", "dlv_redelivered", "dlv_young"]);
    now = at(51);
    expect(await module.sweepDeliveries()).toBe(2);
    expect(await left()).toEqual(["dlv_pending"]);
    await close();
    await store.close();
  });

  it("follows the configured retention", async () => {
    const store = sqliteStore();
    const { deliveries } = webhookCollections(store);
    const t0 = new Date("2026-01-01T00:00:00Z");
    await deliveries.insertOne(delivery("dlv_1", t0, "succeeded"));
    const { module, close } = await moduleOn(store, {
      now: () => new Date(t0.getTime() + 2 * DAY),
      deliveryRetentionMs: DAY,
    });
    expect(await module.sweepDeliveries()).toBe(1);
    await close();
    await store.close();
  });
});

describe("webhook secrets at rest", () => {
  it("re-seals plaintext and previous-key secrets under the current key at start; they still sign", async () => {
    const store = sqliteStore();
    const { webhooks } = webhookCollections(store);
    const [plain, rotatedAway, underOld] = [newSecret(), newSecret(), newSecret()];
    const oldKey = newSecretKey();
    const oldBox = createSecretBox({ current: oldKey, previous: [] });
    // Written before encryption: in clear. And one sealed under the key being rotated out.
    await webhooks.insertOne(webhook("whk_plain", plain, rotatedAway));
    await webhooks.insertOne(webhook("whk_old", oldBox.seal(underOld, "whk_old")));
    const box = createSecretBox({ current: newSecretKey(), previous: [oldKey] });
    const { close } = await moduleOn(store, { secrets: box });
    const stored = await webhooks.find({}, { sort: { _id: 1 } });
    for (const w of stored) {
      expect(box.isCurrent(w.secret), w._id).toBe(true);
      if (w.previousSecret !== null) expect(box.isCurrent(w.previousSecret)).toBe(true);
    }
    const raw = JSON.stringify(stored);
    for (const s of [plain, rotatedAway, underOld]) expect(raw).not.toContain(s.slice("whsec_".length));
    // Signing opens them: a receiver holding the plaintext secret verifies.
    const now = new Date();
    const ts = Math.floor(now.getTime() / 1000);
    for (const [id, secret] of [
      ["whk_plain", plain],
      ["whk_plain", rotatedAway],
      ["whk_old", underOld],
    ] as const) {
      const w = stored.find((x) => x._id === id) as WebhookDoc;
      const signature = signatureHeader(signingSecrets(w, now, box), "dlv_1", ts, "{}");
      expect(verify(secret, { id: "dlv_1", timestamp: String(ts), signature }, "{}", { nowSeconds: ts })).toBe(true);
    }
    await close();
    await store.close();
  });
});
