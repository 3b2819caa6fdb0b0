import { describe, expect, it } from "vitest";
import { createIngestLimiter } from "./ingest-limiter.js";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the ingestion bound", () => {
  it("runs one ingestion at a time, resting so ingestion holds at most its share of the time", async () => {
    const limit = createIngestLimiter({ share: 0.5 });
    const spans: [number, number][] = [];
    const work = async () => {
      const start = Date.now();
      await pause(40);
      spans.push([start, Date.now()]);
    };
    await Promise.all([limit(work), limit(work), limit(work)]);
    for (let i = 1; i < spans.length; i++) {
      const [start] = spans[i] as [number, number];
      const [prevStart, prevEnd] = spans[i - 1] as [number, number];
      // Never two at once, and a rest at least as long as the last one took (share 0.5).
      expect(start - prevEnd).toBeGreaterThanOrEqual(prevEnd - prevStart - 5);
    }
  });

  it("rests by its busy share while runs are stored, and by its idle share while none are", async () => {
    const gapsWith = async (runsStored: () => number) => {
      const limit = createIngestLimiter({ share: 0.25, idleShare: 1, runsStored });
      const spans: [number, number][] = [];
      const work = async () => {
        const start = Date.now();
        await pause(30);
        spans.push([start, Date.now()]);
      };
      await Promise.all([limit(work), limit(work), limit(work)]);
      return spans.slice(1).map(([start], i) => start - (spans[i] as [number, number])[1]);
    };
    let runs = 0;
    // A run stored during every ingestion: each rest is three times the work (share 0.25).
    const busy = await gapsWith(() => ++runs);
    for (const gap of busy) expect(gap).toBeGreaterThanOrEqual(85);
    // No run: after the first ingestion (counted as busy), no rest at all (idle share 1).
    const idle = await gapsWith(() => 7);
    expect(idle[0]).toBeGreaterThanOrEqual(85);
    expect(idle[1]).toBeLessThan(25);
  });

  it("leaves out of the rest the time an ingestion waited on a store elsewhere, but only while no run is stored", async () => {
    const gapsWith = async (runsStored: () => number) => {
      const limit = createIngestLimiter({ share: 0.1, idleShare: 0.1, runsStored });
      const spans: [number, number][] = [];
      const work = async (waitedElsewhere: (ms: number) => void) => {
        const start = Date.now();
        const t = performance.now();
        await pause(60);
        waitedElsewhere(performance.now() - t);
        spans.push([start, Date.now()]);
      };
      await Promise.all([limit(work), limit(work), limit(work)]);
      return spans.slice(1).map(([start], i) => start - (spans[i] as [number, number])[1]);
    };
    // Idle: after the first (counted as busy: a rest of 540 ms), the store's 60 ms are not held.
    const idle = await gapsWith(() => 7);
    expect(idle[0]).toBeGreaterThanOrEqual(500);
    expect(idle[1]).toBeLessThan(200);
    // Runs stored meanwhile: the run path waits on the same store, so its time counts.
    let runs = 0;
    const busy = await gapsWith(() => ++runs);
    for (const gap of busy) expect(gap).toBeGreaterThanOrEqual(500);
  });

  it("refuses one request more than may wait with resource_exhausted, and still serves the others", async () => {
    const limit = createIngestLimiter({ share: 1, maxWaiting: 2 });
    const first = limit(() => pause(20).then(() => 1));
    const second = limit(() => pause(1).then(() => 2));
    await expect(limit(async () => 3)).rejects.toMatchObject({ kind: "resource_exhausted" });
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(await limit(async () => 4)).toBe(4);
  });

  it("refuses a request the turns ahead would keep waiting over maxWaitMs, never the first in line", async () => {
    const limit = createIngestLimiter({ share: 0.5, maxWaitMs: 50 });
    await limit(() => pause(40));
    // Resting ~40 ms: the next one waits for that alone and is taken.
    const second = limit(() => pause(40).then(() => 2));
    // Behind it: its rest left and a whole turn of ~80 ms, over 50 ms.
    await expect(limit(async () => 3)).rejects.toMatchObject({ kind: "resource_exhausted" });
    expect(await second).toBe(2);
  });

  it("passes a failed ingestion's error on and keeps serving", async () => {
    const limit = createIngestLimiter({ share: 1 });
    await expect(limit(() => Promise.reject(new Error("store down")))).rejects.toThrow("store down");
    expect(await limit(async () => "ok")).toBe("ok");
  });
});
