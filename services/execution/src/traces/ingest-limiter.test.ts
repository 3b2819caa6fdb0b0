import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createIngestLimiter, type IngestTurn } from "./ingest-limiter.js";

// A fake clock: pieces "take" time only as the test moves it, so nothing here depends on speed.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "Date", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An ingestion of `pieces` pieces of `ms` each, recording when each piece started and ended. */
function ingestion(pieces: number, ms: number, log: [number, number][] = []) {
  return async (turn: IngestTurn) => {
    for (let i = 0; i < pieces; i++) {
      if (i > 0) await turn.next();
      const start = Date.now();
      await pause(ms);
      log.push([start, Date.now()]);
    }
    return log;
  };
}

const gaps = (log: [number, number][]) => log.slice(1).map(([start], i) => start - (log[i] as [number, number])[1]);

describe("the ingestion bound", () => {
  it("runs one piece at a time, resting so ingestion holds at most its share of the time", async () => {
    const limit = createIngestLimiter({ share: 0.5, maxRestMs: 10_000 });
    const log: [number, number][] = [];
    const all = Promise.all([limit("o1", ingestion(2, 40, log)), limit("o1", ingestion(1, 40, log))]);
    await vi.runAllTimersAsync();
    await all;
    expect(log).toHaveLength(3);
    // Never two at once, and a rest as long as the last piece took (share 0.5).
    for (const gap of gaps(log)) expect(gap).toBeGreaterThanOrEqual(40);
  });

  it("rests by its busy share while runs are stored, and by its idle share while none are", async () => {
    const gapsWith = async (runsStored: () => number) => {
      const limit = createIngestLimiter({ share: 0.25, idleShare: 1, runsStored, maxRestMs: 10_000 });
      const all = limit("o1", ingestion(3, 30));
      await vi.runAllTimersAsync();
      return gaps(await all);
    };
    let runs = 0;
    // A run stored during every piece: each rest is three times the work (share 0.25).
    for (const gap of await gapsWith(() => ++runs)) expect(gap).toBeGreaterThanOrEqual(90);
    // No run: after the first piece (counted as busy), no rest at all (idle share 1).
    const idle = await gapsWith(() => 7);
    expect(idle[0]).toBeGreaterThanOrEqual(90);
    expect(idle[1]).toBe(0);
  });

  it("leaves out of the rest the time a piece waited on a store elsewhere, but only while no run is stored", async () => {
    const gapsWith = async (runsStored: () => number) => {
      const limit = createIngestLimiter({ share: 0.1, idleShare: 0.1, runsStored, maxRestMs: 10_000 });
      const log: [number, number][] = [];
      const all = limit("o1", async (turn) => {
        for (let i = 0; i < 3; i++) {
          if (i > 0) await turn.next();
          const start = Date.now();
          await pause(60);
          turn.waitedElsewhere(60);
          log.push([start, Date.now()]);
        }
        return log;
      });
      await vi.runAllTimersAsync();
      return gaps(await all);
    };
    // Idle: after the first piece (counted as busy: a rest of 540 ms), the store's 60 ms are not held.
    const idle = await gapsWith(() => 7);
    expect(idle[0]).toBeGreaterThanOrEqual(540);
    expect(idle[1]).toBe(0);
    let runs = 0;
    // Runs stored meanwhile: the run path waits on the same store, so its time counts.
    for (const gap of await gapsWith(() => ++runs)) expect(gap).toBeGreaterThanOrEqual(540);
  });

  it("lets another organization's small export through a large one after one piece and one bounded rest", async () => {
    // Share 5 %: after each 700 ms piece the large export's organization rests 13.3 s (or more).
    const limit = createIngestLimiter({ share: 0.05, maxRestMs: 1_000 });
    const large = limit("big", ingestion(20, 700));
    await vi.advanceTimersByTimeAsync(1_500);
    const smallLog: [number, number][] = [];
    const cameAt = Date.now();
    const small = limit("small", ingestion(1, 5, smallLog));
    await vi.advanceTimersByTimeAsync(3_000);
    // It came while a piece or the process's rest was on: it waited at most one piece and one rest.
    expect(smallLog).toHaveLength(1);
    expect((smallLog[0] as [number, number])[0] - cameAt).toBeLessThanOrEqual(700 + 1_000);
    await small;
    // And a third organization too, later on, while the large one still has most of its pieces left.
    await vi.advanceTimersByTimeAsync(20_000);
    const thirdLog: [number, number][] = [];
    const third = limit("third", ingestion(1, 5, thirdLog));
    await vi.advanceTimersByTimeAsync(1_800);
    expect(thirdLog).toHaveLength(1);
    await third;
    await vi.runAllTimersAsync();
    const log = await large;
    expect(log).toHaveLength(20);
    // Alone, the large export keeps to its share: each rest at least 19 times its piece.
    for (const gap of gaps(log)) expect(gap).toBeGreaterThanOrEqual(13_300);
  });

  it("takes the organizations with work waiting round-robin", async () => {
    const limit = createIngestLimiter({ share: 1 });
    const order: string[] = [];
    const of = (org: string, pieces: number) =>
      limit(org, async (turn) => {
        for (let i = 0; i < pieces; i++) {
          if (i > 0) await turn.next();
          order.push(org);
          await pause(10);
        }
      });
    const all = Promise.all([of("a", 3), of("a", 1), of("b", 2), of("c", 1)]);
    await vi.runAllTimersAsync();
    await all;
    expect(order).toEqual(["a", "b", "c", "a", "b", "a", "a"]);
  });

  it("refuses a request that would wait over the bound, and one whose first piece has not started by then, first in line or not", async () => {
    const limit = createIngestLimiter({ share: 0.05, maxWaitMs: 8_000, maxRestMs: 1_000 });
    const large = limit("big", ingestion(2, 700));
    await vi.advanceTimersByTimeAsync(800);
    // Its organization rests 13.3 s: a second export of it would wait over 8 s, refused at once.
    await expect(limit("big", ingestion(1, 5))).rejects.toMatchObject({ kind: "resource_exhausted" });
    // One more (first in line of its organization) held up past the bound by a long piece: refused then.
    const slow = limit("slow", ingestion(1, 20_000));
    await vi.advanceTimersByTimeAsync(1_000);
    const late = limit("late", ingestion(1, 5));
    const refused = expect(late).rejects.toMatchObject({ kind: "resource_exhausted" });
    await vi.advanceTimersByTimeAsync(8_100);
    await refused;
    await vi.runAllTimersAsync();
    expect(await large).toHaveLength(2);
    expect(await slow).toHaveLength(1);
  });

  it("refuses one request more than may wait, in all and per organization, and still serves the others", async () => {
    const limit = createIngestLimiter({ share: 1, maxWaiting: 3, maxWaitingPerOrganization: 2 });
    const first = limit("a", ingestion(1, 20));
    const second = limit("a", ingestion(1, 1));
    await expect(limit("a", ingestion(1, 1))).rejects.toMatchObject({ kind: "resource_exhausted" });
    const third = limit("b", ingestion(1, 1));
    await expect(limit("c", ingestion(1, 1))).rejects.toMatchObject({ kind: "resource_exhausted" });
    await vi.runAllTimersAsync();
    await Promise.all([first, second, third]);
    const again = limit("a", async () => 4);
    await vi.runAllTimersAsync();
    expect(await again).toBe(4);
  });

  it("passes a failed ingestion's error on and keeps serving", async () => {
    const limit = createIngestLimiter({ share: 1 });
    await expect(limit("a", () => Promise.reject(new Error("store down")))).rejects.toThrow("store down");
    const ok = limit("a", async () => "ok");
    await vi.runAllTimersAsync();
    expect(await ok).toBe("ok");
  });
});
