import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type * as Ids from "./ids.js";

const ID = /^[a-z]+_[0-9a-f]{32}$/;

/** The milliseconds an id encodes in its first 12 hex digits. */
const msOf = (id: string) => Number.parseInt(id.slice(id.indexOf("_") + 1, id.indexOf("_") + 13), 16);

/** True when `ids` is already in ascending string order (the order MongoDB sorts `_id` in). */
const isSorted = (ids: string[]) => ids.every((id, i) => i === 0 || (ids[i - 1] as string) < id);

// newId keeps the last time and counter in its module: a fresh module per test keeps a test's
// fake clock (set years ahead) from reaching the next test.
let newId: typeof Ids.newId;
let isId: typeof Ids.isId;
beforeEach(async () => {
  vi.resetModules();
  ({ newId, isId } = await import("./ids.js"));
});

afterEach(() => {
  vi.useRealTimers();
});

describe("newId", () => {
  it("starts with its prefix and continues with 32 lowercase hex digits", () => {
    for (const prefix of ["org", "usr", "key", "pv", "srun"] as const) {
      const id = newId(prefix);
      expect(id.startsWith(`${prefix}_`)).toBe(true);
      expect(id).toMatch(ID);
    }
  });

  it("encodes the creation time in its first 12 hex digits", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2030-06-01T12:00:00.123Z"));
    expect(msOf(newId("run"))).toBe(Date.parse("2030-06-01T12:00:00.123Z"));
  });

  it("never repeats, also for many ids made in a tight loop", () => {
    const ids = Array.from({ length: 20_000 }, () => newId("key"));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("sorts in creation order for many ids made in a tight loop", () => {
    const ids = Array.from({ length: 20_000 }, () => newId("key"));
    expect(isSorted(ids)).toBe(true);
    // The loop is fast enough that many ids share a millisecond: the counter, not the clock, orders them.
    const sharedMs = ids.filter((id, i) => i > 0 && msOf(id) === msOf(ids[i - 1] as string)).length;
    expect(sharedMs).toBeGreaterThan(0);
  });

  it("sorts in creation order while the clock stands still", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(1_900_000_000_000);
    const ids = Array.from({ length: 1_000 }, () => newId("prm"));
    expect(isSorted(ids)).toBe(true);
  });

  it("stays in creation order past 65 536 ids in one millisecond", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(1_900_000_000_000);
    const ids = Array.from({ length: 70_000 }, () => newId("evr"));
    expect(isSorted(ids)).toBe(true);
  });

  it("stays in creation order when the clock steps back", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(1_900_000_000_000);
    const before = newId("org");
    vi.setSystemTime(1_900_000_000_000 - 5_000);
    const after = newId("org");
    expect(after > before).toBe(true);
  });
});

describe("isId", () => {
  it("accepts an id with the given prefix only", () => {
    const id = newId("tool");
    expect(isId(id, "tool")).toBe(true);
    expect(isId(id, "tv")).toBe(false);
  });

  it.each([
    ["empty", ""],
    ["no prefix", "0123456789abcdef0123456789abcdef"],
    ["upper-case hex", "tool_0123456789ABCDEF0123456789ABCDEF"],
    ["short", "tool_0123456789abcdef"],
    ["trailing text", `${"tool_0123456789abcdef0123456789abcdef"}x`],
  ])("refuses a value that is not an id (%s)", (_, value) => {
    expect(isId(value, "tool")).toBe(false);
  });
});
