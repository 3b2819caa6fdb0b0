import { describe, expect, it } from "vitest";
import { createLogger } from "../logger.js";
import { createMemoryStore } from "../store/memory-store.js";
import { type Bus, BusUnavailableError } from "./bus.js";
import { createEventOutbox, type EventIntentDoc, eventStream, outboxEventOf } from "./event-outbox.js";
import { createMemoryBus } from "./memory-bus.js";

const logger = createLogger({ name: "test", level: "silent" });

/** The memory bus, refusing the events `refuse` names with the given error (as nats-server refuses a payload too large). */
function refusing(bus: Bus, refuse: (msgId: string | undefined) => Error | undefined): Bus {
  return {
    ...bus,
    publish: (subject, payload, options) => {
      const error = refuse(options?.msgId);
      return error ? Promise.reject(error) : bus.publish(subject, payload, options);
    },
  };
}

async function setUp(refuse: (msgId: string | undefined) => Error | undefined) {
  const inner = createMemoryBus();
  await inner.ensureStream(eventStream("THINGS", ["things.>"]));
  const intents = createMemoryStore().collection<EventIntentDoc>("intents");
  let clock = new Date("2026-12-07T10:00:00Z");
  const outbox = createEventOutbox(intents, refusing(inner, refuse), logger, { relayAfterMs: 1_000, now: () => clock });
  const events = ["a", "b", "c"].map((id) =>
    outboxEventOf("things.changed", {
      type: "thing.changed",
      sourceId: id,
      organizationId: "org_x",
      at: clock,
      data: {},
    }),
  );
  return {
    intents,
    outbox,
    events,
    later: (ms: number) => {
      clock = new Date(clock.getTime() + ms);
    },
  };
}

describe("the event outbox's relay", () => {
  it("goes past an event the bus refuses for itself, and keeps it pending", async () => {
    let mode: "away" | "refuse a" | "all" = "away";
    const { intents, outbox, events, later } = await setUp((id) => {
      if (mode === "away") return new BusUnavailableError(new Error("nats: disconnected"));
      return mode === "refuse a" && id === "thing.changed:a" ? new Error("MAX_PAYLOAD_EXCEEDED") : undefined;
    });
    // Stored while the bus was away: all three wait for the relay.
    await outbox.add(events);
    await outbox.settled();
    later(5_000);
    // The oldest is refused for itself; the two behind it are published all the same.
    mode = "refuse a";
    expect(await outbox.relayPending()).toBe(2);
    await outbox.settled();
    expect((await intents.find({})).map((i) => i._id)).toEqual(["thing.changed:a"]);
    // Once the bus takes it, the next relay publishes it.
    mode = "all";
    expect(await outbox.relayPending()).toBe(1);
    await outbox.settled();
    expect(await intents.countDocuments({})).toBe(0);
  });

  it("stops at the first event while the bus is away, and publishes them all once it is back", async () => {
    let away = true;
    const { intents, outbox, events, later } = await setUp(() =>
      away ? new BusUnavailableError(new Error("nats: disconnected")) : undefined,
    );
    await outbox.add(events);
    await outbox.settled();
    expect(await intents.countDocuments({})).toBe(3);
    later(5_000);
    expect(await outbox.relayPending()).toBe(0);
    away = false;
    expect(await outbox.relayPending()).toBe(3);
    await outbox.settled();
    expect(await intents.countDocuments({})).toBe(0);
  });
});
