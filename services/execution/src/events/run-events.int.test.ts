import { createNatsBus } from "@kiln/kit/bus/nats";
import { createLogger } from "@kiln/kit/logger";
import { createMongoStore } from "@kiln/kit/store/mongo";
import { afterAll, describe, expect, inject, it } from "vitest";
import { startNatsServer } from "../../../../test/support/servers.js";
import { promptRunFixture } from "../../test/prompt-run-fixture.js";
import { ensureRunIndexes, type RunDoc, runCollection } from "../store/run-store.js";
import { createRunEventOutbox, RUNS_STREAM, runEventIntentCollection } from "./run-events.js";

const logger = createLogger({ name: "test", level: "silent" });

function newRun(i: number): RunDoc {
  return promptRunFixture(
    `run_${Date.now().toString(16).padStart(12, "0")}${i.toString(16).padStart(20, "0")}`,
    "org_outage",
  );
}

describe("run.completed outbox across a nats-server outage", () => {
  const store = createMongoStore({ url: inject("mongoUrl"), database: `kiln_outbox_${Date.now()}` });

  afterAll(async () => {
    await store.close();
  });

  it("publishes every stored run exactly once although the bus was down while runs were stored", async () => {
    let server = await startNatsServer();
    const port = Number(new URL(server.url).port);
    const bus = await createNatsBus({ url: server.url, name: "outbox-test" });
    const runs = runCollection(store);
    await ensureRunIndexes(store);
    const intents = runEventIntentCollection(store);
    const outbox = createRunEventOutbox(runs, intents, bus, logger, { relayAfterMs: 500 });
    try {
      await bus.ensureStream(RUNS_STREAM);
      // A consumer that exists before any run: interest retention keeps what it has not acked.
      const consumer = { stream: RUNS_STREAM.name, durable: "audit", filterSubject: "runs.completed.>" };
      await bus.ensureConsumer(consumer);

      const store1 = async (i: number) => {
        const run = newRun(i);
        await outbox.intend(run._id);
        await runs.insertOne(run);
        outbox.publish(run);
        return run._id;
      };
      const before = await Promise.all([0, 1, 2, 3, 4].map(store1));
      // Their events leave in the background: published while the bus is up.
      await outbox.settled();
      // The bus goes away while runs keep being stored: they wait in the outbox.
      await server.stop();
      const during = await Promise.all([5, 6, 7, 8, 9].map(store1));
      await outbox.settled();
      expect((await intents.find({})).map((i) => i._id).sort()).toEqual([...during].sort());
      server = await startNatsServer({ dir: server.dir, port });
      outbox.start(200);
      const after = await Promise.all([10, 11].map(store1));
      const all = [...before, ...during, ...after];

      const seen: string[] = [];
      const sub = bus.consume(consumer, async (msg) => {
        seen.push(msg.json<{ runId: string }>().runId);
      });
      const deadline = Date.now() + 30_000;
      while (new Set(seen).size < all.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      // Any duplicate would arrive right behind; give it the chance.
      await new Promise((r) => setTimeout(r, 500));
      await sub.stop();
      expect([...seen].sort()).toEqual([...all].sort());
      await outbox.settled();
      expect(await intents.countDocuments({})).toBe(0);
    } finally {
      await outbox.stop();
      await bus.close();
      await server.stop({ removeData: true });
    }
  }, 60_000);
});
