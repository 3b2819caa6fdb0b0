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

  it("leaves out of the rest the time an ingestion reports waiting elsewhere (a store in another process)", async () => {
    const limit = createIngestLimiter({ share: 0.1 });
    const starts: number[] = [];
    const work = async (waitedElsewhere: (ms: number) => void) => {
      starts.push(Date.now());
      const t = performance.now();
      await pause(60);
      waitedElsewhere(performance.now() - t);
    };
    await Promise.all([limit(work), limit(work)]);
    // Held (60 ms) counted, the rest would be 540 ms; all of it was elsewhere, so almost none.
    expect((starts[1] as number) - (starts[0] as number)).toBeLessThan(200);
  });

  it("refuses one request more than may wait with resource_exhausted, and still serves the others", async () => {
    const limit = createIngestLimiter({ share: 1, maxWaiting: 2 });
    const first = limit(() => pause(20).then(() => 1));
    const second = limit(() => pause(1).then(() => 2));
    await expect(limit(async () => 3)).rejects.toMatchObject({ kind: "resource_exhausted" });
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(await limit(async () => 4)).toBe(4);
  });

  it("passes a failed ingestion's error on and keeps serving", async () => {
    const limit = createIngestLimiter({ share: 1 });
    await expect(limit(() => Promise.reject(new Error("store down")))).rejects.toThrow("store down");
    expect(await limit(async () => "ok")).toBe("ok");
  });
});
