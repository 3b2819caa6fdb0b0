/**
 * The dispatcher on the in-process bus and store, against a local HTTP receiver: Retry-After is
 * honoured, an endpoint failing for `disableAfterMs` is disabled with its reason, two dispatchers
 * never attempt one delivery at once, and the retry window gives up.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import { createLogger } from "@kiln/kit/logger";
import { parseHostPatterns } from "@kiln/kit/outbound/host-patterns";
import { createSecretBox, newSecretKey } from "@kiln/kit/secret-box";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { afterEach, describe, expect, it } from "vitest";
import { createDispatcher } from "./dispatcher.js";
import { DEFAULT_RETRY, type RetryPolicy } from "./retry-policy.js";
import { ensureWebhookIndexes, type WebhookDoc, webhookCollections } from "./store.js";
import { createSubscriberCache } from "./subscriber-cache.js";

const logger = createLogger({ name: "test", level: "silent" });
const servers: Server[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function receiver(answer: (n: number) => { status: number; headers?: Record<string, string> }) {
  const hits: { at: number; id: string }[] = [];
  const server = createServer((req, res) => {
    hits.push({ at: Date.now(), id: String(req.headers["webhook-id"]) });
    req.resume();
    req.on("end", () => {
      const a = answer(hits.length);
      res.writeHead(a.status, a.headers).end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { hits, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

async function setUp(url: string, retry: Partial<RetryPolicy>, dispatchers = 1, events = ["label.moved"]) {
  const store = createMemoryStore();
  await ensureWebhookIndexes(store);
  const bus = createMemoryBus();
  await bus.ensureStream({ name: "CATALOG", subjects: ["catalog.>"], retention: "limits" });
  const collections = webhookCollections(store);
  const webhook: WebhookDoc = {
    _id: "whk_00000000000000000000000000000001",
    organizationId: "org_1",
    url,
    events,
    description: "",
    status: "enabled",
    disabledReason: "",
    failingSince: null,
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    previousSecret: null,
    previousSecretUntil: null,
    createdAt: new Date(),
    updatedAt: new Date(),
  };
  await collections.webhooks.insertOne(webhook);
  // Counts the fan-out's reads of an organization's webhooks.
  const reads = { webhooks: 0 };
  const find = collections.webhooks.find.bind(collections.webhooks);
  collections.webhooks.find = (filter, options) => {
    reads.webhooks++;
    return find(filter, options);
  };
  const subscribers = createSubscriberCache();
  const started: ReturnType<typeof createDispatcher>[] = [];
  for (let i = 0; i < dispatchers; i++) {
    const d = createDispatcher({
      subscribers,
      collections,
      bus,
      logger,
      delivery: {
        privateHosts: parseHostPatterns("127.0.0.1"),
        resolve: async () => [],
        timeoutMs: 2_000,
        now: () => new Date(),
        // The webhook below holds its secret in plaintext, as documents written before encryption do.
        secrets: createSecretBox({ current: newSecretKey(), previous: [] }),
      },
      retry: { ...DEFAULT_RETRY, ...retry },
      ackWaitMs: 2_000,
    });
    await d.start();
    started.push(d);
  }
  const emit = (n: number, msgId = `e${n}`) =>
    bus.publish(
      "catalog.label.moved",
      JSON.stringify({
        id: `label.moved:lbm_${n}`,
        type: "label.moved",
        organizationId: "org_1",
        occurredAt: "t",
        data: {},
      }),
      { msgId },
    );
  return {
    collections,
    reads,
    started,
    emit,
    stop: async () => {
      for (const d of started) await d.stop();
      await bus.close();
    },
  };
}

const until = async (probe: () => Promise<boolean> | boolean, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return probe();
};

describe("the webhook dispatcher", () => {
  it("waits what Retry-After asks before the next attempt", async () => {
    const r = await receiver((n) => (n === 1 ? { status: 429, headers: { "retry-after": "1" } } : { status: 204 }));
    const kiln = await setUp(r.url, { baseDelayMs: 10 });
    await kiln.emit(1);
    expect(await until(() => r.hits.length >= 2)).toBe(true);
    expect((r.hits[1]?.at ?? 0) - (r.hits[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(r.hits[0]?.id).toBe(r.hits[1]?.id);
    // The receiver saw the attempt before the dispatcher recorded its answer.
    expect(await until(async () => (await kiln.collections.deliveries.findOne({}))?.status === "succeeded")).toBe(true);
    const [delivery] = await kiln.collections.deliveries.find({});
    expect(delivery?.attempts.map((a) => a.responseCode)).toEqual([429, 204]);
    expect(delivery?.status).toBe("succeeded");
    await kiln.stop();
  });

  it("disables an endpoint failing for disableAfterMs, says why, and gives up after the retry window", async () => {
    const r = await receiver(() => ({ status: 503 }));
    const kiln = await setUp(r.url, { baseDelayMs: 50, maxDelayMs: 100, windowMs: 600, disableAfterMs: 300 });
    await kiln.emit(1);
    expect(await until(async () => (await kiln.collections.webhooks.findOne({}))?.status === "disabled")).toBe(true);
    const webhook = await kiln.collections.webhooks.findOne({});
    expect(webhook?.disabledReason).toMatch(/every delivery has failed since .* \(last: HTTP 503\)/);
    expect(webhook?.failingSince).toBeInstanceOf(Date);
    expect(await until(async () => (await kiln.collections.deliveries.findOne({}))?.status === "failed")).toBe(true);
    const delivery = await kiln.collections.deliveries.findOne({});
    expect(delivery?.attempts.at(-1)?.error).toMatch(/HTTP 503|not attempted: the webhook is disabled/);
    await kiln.stop();
  });

  it("never has two dispatchers attempt one delivery at once, and makes one delivery of an event sent twice", async () => {
    let inFlight = 0;
    let most = 0;
    const slow = createServer((req, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(200).end();
      }, 100);
      req.resume();
    });
    servers.push(slow);
    await new Promise<void>((r) => slow.listen(0, "127.0.0.1", r));
    const kiln = await setUp(`http://127.0.0.1:${(slow.address() as AddressInfo).port}/`, {}, 3);
    for (let i = 0; i < 10; i++) await kiln.emit(i);
    // The same event again, under another bus message id: the bus delivers it, the key keeps one delivery.
    await kiln.emit(3, "e3-again");
    expect(
      await until(async () => (await kiln.collections.deliveries.countDocuments({ status: "succeeded" })) === 10),
    ).toBe(true);
    const deliveries = await kiln.collections.deliveries.find({});
    expect(deliveries).toHaveLength(10);
    expect(deliveries.every((d) => d.attempts.length === 1)).toBe(true);
    expect(most).toBeGreaterThan(1);
    await kiln.stop();
  });

  it("reads an organization's webhooks once a second for fan-out, and at once after a change through forget", async () => {
    const r = await receiver(() => ({ status: 204 }));
    const kiln = await setUp(r.url, {}, 2, ["run.completed"]);
    for (let i = 0; i < 5; i++) await kiln.emit(i);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Not subscribed to label.moved: nothing delivered, and one read served the five events.
    expect(await kiln.collections.deliveries.countDocuments({})).toBe(0);
    expect(kiln.reads.webhooks).toBe(1);
    await kiln.collections.webhooks.updateOne({}, { $set: { events: ["label.moved"] } });
    // The RPC service changed it: the dispatchers sharing this cache see it at the next event.
    kiln.started[1]?.forget("org_1");
    await kiln.emit(5);
    expect(
      await until(async () => (await kiln.collections.deliveries.countDocuments({ status: "succeeded" })) === 1),
    ).toBe(true);
    expect(kiln.reads.webhooks).toBe(2);
    await kiln.stop();
  });
});
