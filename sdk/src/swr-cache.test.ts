import { describe, expect, it } from "vitest";
import { SwrCache } from "./swr-cache.js";

describe("SwrCache", () => {
  it("answers fresh, then stale while one background load runs, then the new value", async () => {
    let now = 0;
    const cache = new SwrCache<number>({ now: () => now });
    let loads = 0;
    let release = () => {};
    const load = () => {
      loads++;
      return loads === 1 ? Promise.resolve(1) : new Promise<number>((resolve) => (release = () => resolve(loads)));
    };
    expect(await cache.get("k", 100, load)).toEqual([1, "loaded"]);
    now = 99;
    expect(await cache.get("k", 100, load)).toEqual([1, "fresh"]);
    now = 100;
    expect(await cache.get("k", 100, load)).toEqual([1, "stale"]);
    expect(await cache.get("k", 100, load)).toEqual([1, "stale"]);
    // One background load for both stale answers, still running.
    expect(loads).toBe(2);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await cache.get("k", 100, load)).toEqual([2, "fresh"]);
  });

  it("keeps the stale value when the background load fails, and passes the previous value to load", async () => {
    let now = 0;
    const cache = new SwrCache<string>({ now: () => now });
    await cache.get("k", 10, async () => "first");
    now = 10;
    const seen: (string | undefined)[] = [];
    const failing = async (previous: string | undefined) => {
      seen.push(previous);
      throw new Error("down");
    };
    expect(await cache.get("k", 10, failing)).toEqual(["first", "stale"]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(["first"]);
    expect(await cache.get("k", 10, async () => "second")).toEqual(["first", "stale"]);
    await expect(cache.get("absent", 10, failing)).rejects.toThrow("down");
  });

  it("keeps at most maxEntries, dropping the least recently used", async () => {
    const cache = new SwrCache<string>({ maxEntries: 2 });
    await cache.get("a", 1_000, async () => "a");
    await cache.get("b", 1_000, async () => "b");
    await cache.get("a", 1_000, async () => "a2");
    await cache.get("c", 1_000, async () => "c");
    expect(await cache.get("a", 1_000, async () => "a3")).toEqual(["a", "fresh"]);
    expect(await cache.get("b", 1_000, async () => "b2")).toEqual(["b2", "loaded"]);
  });
});
