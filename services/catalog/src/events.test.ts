import type { CatalogEvent } from "@kiln/contracts/events";
import type { Bus } from "@kiln/kit/bus";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import { createEventOutbox, type EventIntentDoc } from "@kiln/kit/bus/outbox";
import { createLogger } from "@kiln/kit/logger";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { describe, expect, it } from "vitest";
import { createTestCatalog, ORG_A, principals } from "../test/test-catalog.js";
import { CATALOG_STREAM } from "./events.js";

const { userA } = principals;

async function collect(bus: Bus) {
  const seen: { subject: string; event: CatalogEvent }[] = [];
  bus.consume({ stream: "CATALOG", durable: "test" }, async (msg) => {
    seen.push({ subject: msg.subject, event: msg.json<CatalogEvent>() });
  });
  return seen;
}

const until = async (probe: () => boolean) => {
  for (let i = 0; i < 200 && !probe(); i++) await new Promise((r) => setTimeout(r, 5));
};

describe("catalog events", () => {
  it("publishes a version created, the publish (with its label move) and a label moved, through the outbox", async () => {
    const catalog = await createTestCatalog();
    const seen = await collect(catalog.bus);
    const { prompt } = await catalog.prompts.createPrompt(userA, { organizationId: ORG_A, name: "E", description: "" });
    const v1 = await catalog.prompts.createPromptVersion(userA, {
      promptId: prompt._id,
      systemPrompt: "one",
      tools: [],
    });
    await catalog.prompts.publishPromptVersion(userA, { promptId: prompt._id, versionId: v1._id });
    await catalog.labels.setLabel(userA, { kind: "prompt", parentId: prompt._id, label: "staging", versionId: v1._id });
    await catalog.outbox.settled();
    await until(() => seen.length >= 4);
    expect(seen.map((s) => s.subject)).toEqual([
      "catalog.prompt.version.created",
      "catalog.prompt.published",
      "catalog.label.moved",
      "catalog.label.moved",
    ]);
    const [created, published, productionMoved, stagingMoved] = seen.map((s) => s.event);
    expect(created).toMatchObject({
      type: "prompt.version.created",
      organizationId: ORG_A,
      data: { promptId: prompt._id, versionId: v1._id, version: 1, status: "draft" },
    });
    expect(published).toMatchObject({
      type: "prompt.published",
      data: { promptId: prompt._id, versionId: v1._id, previousVersionId: null, by: "usr_a" },
    });
    expect(productionMoved?.data).toMatchObject({ label: "production", action: "published", kind: "prompt" });
    expect(stagingMoved?.data).toMatchObject({ label: "staging", action: "moved", versionId: v1._id });
    // Every event has its own id, the JetStream message id; nothing is left in the outbox.
    expect(new Set(seen.map((s) => s.event.id)).size).toBe(4);
    expect(await catalog.store.collection("catalog_event_outbox").countDocuments({})).toBe(0);
  });
});

describe("the event outbox", () => {
  it("keeps what the bus refused and the relay publishes it once the bus is back, once", async () => {
    const bus = createMemoryBus();
    await bus.ensureStream(CATALOG_STREAM);
    let down = true;
    const flaky: Bus = {
      ...bus,
      publish: (subject, payload, options) =>
        down ? Promise.reject(new Error("bus down")) : bus.publish(subject, payload, options),
    };
    const store = createMemoryStore();
    const intents = store.collection<EventIntentDoc>("outbox");
    let clock = Date.parse("2026-01-01T00:00:00Z");
    const outbox = createEventOutbox(intents, flaky, createLogger({ name: "test", level: "silent" }), {
      relayAfterMs: 1_000,
      now: () => new Date(clock),
    });
    const seen = await collect(bus);
    await outbox.add([{ id: "e1", subject: "catalog.label.moved", payload: '{"id":"e1"}' }]);
    // The same event added again while it is pending (a repeated completion) is one intent.
    await outbox.add([{ id: "e1", subject: "catalog.label.moved", payload: '{"id":"e1"}' }]);
    // Several at once go in together; one of them already pending keeps its intent, the others join.
    await outbox.add(
      ["e1", "e2", "e3"].map((id) => ({ id, subject: "catalog.label.moved", payload: JSON.stringify({ id }) })),
    );
    await outbox.settled();
    expect((await intents.find({}, { sort: { _id: 1 } })).map((d) => d._id)).toEqual(["e1", "e2", "e3"]);
    expect(await outbox.relayPending()).toBe(0); // too young: its own process may still publish it
    down = false;
    clock += 1_000;
    expect(await outbox.relayPending()).toBe(3);
    await outbox.settled();
    expect(await intents.countDocuments({})).toBe(0);
    // Published again (a relay racing the first publish): the stream drops the duplicate.
    await flaky.publish("catalog.label.moved", '{"id":"e1"}', { msgId: "e1" });
    await until(() => seen.length >= 3);
    await new Promise((r) => setTimeout(r, 20));
    expect(seen.map((s) => s.event.id)).toEqual(["e1", "e2", "e3"]);
    await bus.close();
  });
});
