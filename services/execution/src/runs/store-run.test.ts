import { createMemoryBus } from "@kiln/kit/bus/memory";
import { createLogger } from "@kiln/kit/logger";
import { aroundCollection, StoreUnavailableError } from "@kiln/kit/store";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { describe, expect, it, vi } from "vitest";
import { promptRunFixture } from "../../test/prompt-run-fixture.js";
import { until } from "../../test/until.js";
import { createRunEventOutbox, RUNS_STREAM, runEventIntentCollection } from "../events/run-events.js";
import { type RunDoc, runCollection } from "../store/run-store.js";
import { createRunKeys } from "./run-keys.js";
import { storeRun } from "./store-run.js";

const logger = createLogger({ name: "test", level: "silent" });

/**
 * A store whose run inserts fail the caller: `landed` says whether the write reached the store
 * first, or reaches it a second later ("late": the server was still carrying it out).
 */
async function harness(landed: boolean | "late") {
  const store = createMemoryStore();
  const bus = createMemoryBus();
  await bus.ensureStream(RUNS_STREAM);
  const seen: string[] = [];
  const sub = bus.consume(
    { stream: RUNS_STREAM.name, durable: "audit", filterSubject: "runs.completed.>" },
    async (m) => {
      seen.push(m.json<{ runId: string }>().runId);
    },
  );
  const real = runCollection(store);
  let away = true;
  const runs = aroundCollection(real, async (method, call) => {
    if (method.startsWith("insert")) {
      if (landed === true) await call();
      if (landed === "late") setTimeout(() => void call(), 1_000);
      throw new StoreUnavailableError(new Error("connection reset"));
    }
    // The store answers reads again a little after the failed insert.
    if (away) throw new StoreUnavailableError(new Error("connection refused"));
    return call();
  });
  setTimeout(() => {
    away = false;
  }, 300);
  const intents = runEventIntentCollection(store);
  const outbox = createRunEventOutbox(runs, intents, bus, logger, { relayAfterMs: 60_000 });
  return {
    runs,
    real,
    intents,
    outbox,
    seen,
    close: async () => {
      await sub.stop();
      await outbox.stop();
      await bus.close();
    },
  };
}

/** Stores `doc` through the harness's failing store (the caller sees the insert fail). */
const storeThrough = (h: Awaited<ReturnType<typeof harness>>, doc: RunDoc) =>
  storeRun({ runs: h.runs, outbox: h.outbox }, { id: doc._id, organizationId: doc.organizationId }, async () => doc);

const run = (): RunDoc => promptRunFixture(`run_${Date.now().toString(16).padStart(32, "0")}`, "org_unknown");

describe("a run insert whose outcome is unknown", () => {
  it("publishes run.completed when the read after the store's return finds the run stored", async () => {
    const h = await harness(true);
    const doc = run();
    try {
      await expect(storeThrough(h, doc)).rejects.toThrow(StoreUnavailableError);
      expect(await h.real.findOne({ _id: doc._id })).not.toBeNull();
      await until(async () => h.seen.includes(doc._id));
      await until(async () => (await h.intents.countDocuments({})) === 0);
    } finally {
      await h.close();
    }
  });

  it("forgets the intent once the read after the store's return finds no run", async () => {
    const h = await harness(false);
    const doc = run();
    try {
      await expect(storeThrough(h, doc)).rejects.toThrow(StoreUnavailableError);
      // Kept while the store cannot say whether the run is there.
      expect(await h.intents.countDocuments({ _id: doc._id })).toBe(1);
      await until(async () => (await h.intents.countDocuments({})) === 0, 15_000);
      expect(h.seen).toEqual([]);
    } finally {
      await h.close();
    }
  }, 20_000);
});

describe("a run insert that lands after the store answered the first read", () => {
  it("publishes run.completed: the intent is forgotten only when a second read still finds no run", async () => {
    const h = await harness("late");
    const doc = run();
    try {
      await expect(storeThrough(h, doc)).rejects.toThrow(StoreUnavailableError);
      await until(async () => (await h.real.findOne({ _id: doc._id })) !== null);
      await until(async () => h.seen.includes(doc._id), 15_000);
      await until(async () => (await h.intents.countDocuments({})) === 0);
    } finally {
      await h.close();
    }
  }, 20_000);
});

describe("a retry of a call whose claim did not survive", () => {
  const ids = (n: number) => `run_${n.toString(16).padStart(32, "0")}`;

  it("answers the run its first attempt stored while that attempt's caller saw a failure, and runs nothing", async () => {
    const h = await harness(true);
    const runKeys = createRunKeys(createMemoryStore(), h.real);
    const first = run();
    try {
      await expect(
        storeRun(
          { runs: h.runs, outbox: h.outbox, runKeys },
          { id: first._id, organizationId: first.organizationId, idempotencyKey: "k1" },
          async () => first,
        ),
      ).rejects.toThrow(StoreUnavailableError);
      const execute = vi.fn(async () => promptRunFixture(ids(2), first.organizationId));
      const retried = await storeRun(
        { runs: h.real, outbox: h.outbox, runKeys },
        { id: ids(2), organizationId: first.organizationId, idempotencyKey: "k1" },
        execute,
      );
      expect(retried._id).toBe(first._id);
      expect(execute).not.toHaveBeenCalled();
      // Another key, or the same key in another organization, is another call.
      const other = await storeRun(
        { runs: h.real, outbox: h.outbox, runKeys },
        { id: ids(3), organizationId: first.organizationId, idempotencyKey: "k2" },
        async () => promptRunFixture(ids(3), first.organizationId),
      );
      expect(other._id).toBe(ids(3));
      expect(await runKeys.prior("k1", "org_other")).toBeNull();
    } finally {
      await h.close();
    }
  });

  it("runs again when the first attempt stored no run, and its key then answers the retry's run", async () => {
    const store = createMemoryStore();
    const runs = runCollection(store);
    const bus = createMemoryBus();
    await bus.ensureStream(RUNS_STREAM);
    const outbox = createRunEventOutbox(runs, runEventIntentCollection(store), bus, logger);
    const deps = { runs, outbox, runKeys: createRunKeys(store, runs) };
    const start = (n: number) => ({ id: ids(n), organizationId: "org_a", idempotencyKey: "k" });
    try {
      await expect(
        storeRun(deps, start(1), async () => {
          throw new Error("the provider failed before anything was stored");
        }),
      ).rejects.toThrow("provider failed");
      const second = await storeRun(deps, start(2), async () => promptRunFixture(ids(2), "org_a"));
      expect(second._id).toBe(ids(2));
      const third = await storeRun(deps, start(3), async () => promptRunFixture(ids(3), "org_a"));
      expect(third._id).toBe(ids(2));
      expect(await runs.countDocuments({})).toBe(1);
    } finally {
      await outbox.stop();
      await bus.close();
    }
  });
});
