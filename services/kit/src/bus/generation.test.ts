/**
 * The catalog's change counter on the in-process bus: calls of one turn share one read, and a
 * call never shares a read that was sent before it was made.
 */
import { describe, expect, it } from "vitest";
import { createLogger } from "../logger.js";
import { CATALOG_GENERATION, createGeneration } from "./generation.js";
import { createMemoryBus } from "./memory-bus.js";

const logger = createLogger({ name: "test", level: "silent" });

async function setUp() {
  const bus = createMemoryBus();
  await bus.ensureStream(CATALOG_GENERATION);
  let reads = 0;
  const counting = {
    ...bus,
    streamInfo: (name: string) => {
      reads++;
      return bus.streamInfo(name);
    },
  };
  return { generation: createGeneration(counting, logger), reads: () => reads };
}

describe("createGeneration", () => {
  it("answers the calls of one turn with one read, and moves after a bump", async () => {
    const t = await setUp();
    const seen = await Promise.all([t.generation.current(), t.generation.current(), t.generation.current()]);
    expect(new Set(seen).size).toBe(1);
    expect(t.reads()).toBe(1);
    await t.generation.bump();
    expect(await t.generation.current()).toBe((seen[0] as number) + 1);
    expect(t.reads()).toBe(2);
  });

  it("never gives a call a read sent before the call was made", async () => {
    const t = await setUp();
    const first = t.generation.current();
    // The first read has gone out.
    await Promise.resolve();
    await Promise.resolve();
    expect(t.reads()).toBe(1);
    await t.generation.bump();
    const second = await t.generation.current();
    expect(second).toBe((await first) + 1);
    expect(t.reads()).toBe(2);
  });

  it("rejects every call of a turn when the bus does not answer, and reads again on the next", async () => {
    const bus = createMemoryBus();
    await bus.ensureStream(CATALOG_GENERATION);
    let down = true;
    const flaky = {
      ...bus,
      streamInfo: (name: string) => (down ? Promise.reject(new Error("bus down")) : bus.streamInfo(name)),
    };
    const generation = createGeneration(flaky, logger);
    const both = [generation.current(), generation.current()];
    for (const call of both) await expect(call).rejects.toThrow("bus down");
    down = false;
    expect(await generation.current()).toBeGreaterThanOrEqual(0);
  });
});
