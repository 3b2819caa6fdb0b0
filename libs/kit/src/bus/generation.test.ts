/**
 * The catalog's change counter on the in-process bus: calls of one turn share one read, and a
 * call never shares a read that was sent before it was made.
 */
import { describe, expect, it } from "vitest";
import { createLogger } from "../logger.js";
import { CATALOG_GENERATION, createGeneration, watchGeneration } from "./generation.js";
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

/** A memory bus with the generation stream, and a view of it that counts its streamInfo reads. */
async function countedBus() {
  const bus = createMemoryBus();
  await bus.ensureStream(CATALOG_GENERATION);
  let count = 0;
  const counting = {
    ...bus,
    streamInfo: (name: string) => {
      count++;
      return bus.streamInfo(name);
    },
  };
  return { bus, counting, reads: () => count };
}

describe("watchGeneration", () => {
  it("reads the bus once until the counter moves, and again after each move it hears", async () => {
    const { bus, counting, reads } = await countedBus();
    const watched = watchGeneration(counting, createGeneration(counting, logger), CATALOG_GENERATION, 60_000);
    const first = await watched.current();
    expect([await watched.current(), await watched.current()]).toEqual([first, first]);
    expect(reads()).toBe(1);
    // A move made by another process (another catalog replica) is heard: the next call reads.
    await createGeneration(bus, logger).bump();
    expect(await watched.current()).toBe(first + 1);
    expect(await watched.current()).toBe(first + 1);
    expect(reads()).toBe(2);
    await watched.stop();
  });

  it("does not trust a read during which a move was heard", async () => {
    const bus = createMemoryBus();
    await bus.ensureStream(CATALOG_GENERATION);
    let reads = 0;
    let moveDuringRead = true;
    const other = createGeneration(bus, logger);
    const racing = {
      ...bus,
      streamInfo: async (name: string) => {
        reads++;
        const info = await bus.streamInfo(name);
        // The move lands after the read was answered but before its answer arrived.
        if (moveDuringRead) await other.bump();
        moveDuringRead = false;
        return info;
      },
    };
    const watched = watchGeneration(racing, createGeneration(racing, logger), CATALOG_GENERATION, 60_000);
    const stale = await watched.current();
    expect(await watched.current()).toBe(stale + 1);
    expect(reads).toBe(2);
    await watched.stop();
  });

  it("reads again once what it read is older than trustMs, in case a move was missed", async () => {
    const { counting, reads } = await countedBus();
    const watched = watchGeneration(counting, createGeneration(counting, logger), CATALOG_GENERATION, 0);
    await watched.current();
    await watched.current();
    expect(reads()).toBe(2);
    await watched.stop();
  });
});
