import { createMemoryBus } from "@kiln/kit/bus/memory";
import { createLogger } from "@kiln/kit/logger";
import { aroundCollection, StoreUnavailableError } from "@kiln/kit/store";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { describe, expect, it } from "vitest";
import { promptRunFixture } from "../../test/prompt-run-fixture.js";
import { until } from "../../test/until.js";
import { createRunEventOutbox, RUNS_STREAM, runEventIntentCollection } from "../events/run-events.js";
import { type RunDoc, runCollection } from "../store/run-store.js";
import { storeRun } from "./store-run.js";

const logger = createLogger({ name: "test", level: "silent" });

/** A store whose run inserts fail the caller: `landed` says whether the write reached the store first. */
async function harness(landed: boolean) {
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
      if (landed) await call();
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

const run = (): RunDoc => promptRunFixture(`run_${Date.now().toString(16).padStart(32, "0")}`, "org_unknown");

describe("a run insert whose outcome is unknown", () => {
  it("publishes run.completed when the read after the store's return finds the run stored", async () => {
    const h = await harness(true);
    const doc = run();
    try {
      await expect(
        storeRun(
          { runs: h.runs, outbox: h.outbox },
          { id: doc._id, organizationId: doc.organizationId },
          async () => doc,
        ),
      ).rejects.toThrow(StoreUnavailableError);
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
      await expect(
        storeRun(
          { runs: h.runs, outbox: h.outbox },
          { id: doc._id, organizationId: doc.organizationId },
          async () => doc,
        ),
      ).rejects.toThrow(StoreUnavailableError);
      // Kept while the store cannot say whether the run is there.
      expect(await h.intents.countDocuments({ _id: doc._id })).toBe(1);
      await until(async () => (await h.intents.countDocuments({})) === 0);
      expect(h.seen).toEqual([]);
    } finally {
      await h.close();
    }
  });
});
