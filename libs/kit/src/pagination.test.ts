import { describe, expect, it } from "vitest";
import { findPage, findPageByTime } from "./pagination.js";
import { createMemoryStore } from "./store/memory-store.js";
import type { Collection, Filter } from "./store/store.js";

interface Item {
  _id: string;
  at: Date;
}

/** Five items, two of them at the same time (ties go by `_id`). */
async function items() {
  const c = createMemoryStore().collection<Item>("items");
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
  await c.insertMany([
    { _id: "a", at: at(3) },
    { _id: "b", at: at(1) },
    { _id: "c", at: at(2) },
    { _id: "d", at: at(2) },
    { _id: "e", at: at(5) },
  ]);
  return c;
}

async function all(direction: 1 | -1, limit: number) {
  const c = await items();
  const seen: string[] = [];
  let cursor = "";
  do {
    const page = await findPageByTime(c, {}, { field: "at", direction }, { limit, cursor });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    seen.push(...page.items.map((i) => i._id));
    cursor = page.nextCursor;
  } while (cursor);
  return seen;
}

describe("findPageByTime", () => {
  it("pages latest first, ties by _id, each item once", async () => {
    expect(await all(-1, 2)).toEqual(["e", "a", "d", "c", "b"]);
    expect(await all(-1, 1)).toEqual(["e", "a", "d", "c", "b"]);
  });

  it("pages earliest first", async () => {
    expect(await all(1, 2)).toEqual(["b", "c", "d", "a", "e"]);
  });

  it("pages through more ties than a page holds, and keeps the filter's own bound on the field", async () => {
    const c = createMemoryStore().collection<Item>("ties");
    const same = new Date(Date.UTC(2026, 0, 1));
    const later = new Date(Date.UTC(2026, 0, 2));
    await c.insertMany([...Array.from({ length: 7 }, (_, i) => ({ _id: `t${i}`, at: same })), { _id: "z", at: later }]);
    const order = { field: "at", direction: -1 } as const;
    const seen: string[] = [];
    let cursor = "";
    do {
      const page = await findPageByTime(c, { at: { $lt: later } }, order, { limit: 2, cursor });
      seen.push(...page.items.map((i) => i._id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(["t6", "t5", "t4", "t3", "t2", "t1", "t0"]);
  });

  it("refuses a cursor it did not make, and a limit out of range", async () => {
    const c = await items();
    const order = { field: "at", direction: -1 } as const;
    for (const cursor of ["bogus", Buffer.from('["not a time","a"]').toString("base64url")]) {
      await expect(findPageByTime(c, {}, order, { limit: 2, cursor })).rejects.toMatchObject({
        kind: "invalid_argument",
      });
    }
    await expect(findPageByTime(c, {}, order, { limit: 201, cursor: "" })).rejects.toMatchObject({
      kind: "invalid_argument",
    });
  });
});

describe("findPage", () => {
  const id = (n: number) => `run_${n.toString(16).padStart(32, "0")}`;
  /** The filters findPage sends, over a real in-memory collection of runs of two organizations. */
  async function paged(filter: Filter, oldestFirst?: boolean) {
    const c = createMemoryStore().collection<{ _id: string; org: string }>("runs");
    await c.insertMany(Array.from({ length: 5 }, (_, i) => ({ _id: id(i + 1), org: i % 2 === 0 ? "a" : "b" })));
    const sent: Filter[] = [];
    const recording: Collection<{ _id: string; org: string }> = {
      ...c,
      find: (f, options) => {
        sent.push(f);
        return c.find(f, options);
      },
    };
    const seen: string[] = [];
    let cursor = "";
    do {
      const page = await findPage(recording, filter, { limit: 1, cursor, oldestFirst });
      seen.push(...page.items.map((d) => d._id));
      cursor = page.nextCursor;
    } while (cursor);
    return { seen, sent };
  }

  it("puts the cursor beside the filter's keys (FerretDB pushes no top-level $and down)", async () => {
    const { seen, sent } = await paged({ org: "a" });
    expect(seen).toEqual([id(5), id(3), id(1)]);
    expect(sent[1]).toEqual({ org: "a", _id: { $lt: id(5) } });
  });

  it("keeps a filter's own _id condition, beside the cursor's", async () => {
    const { seen, sent } = await paged({ _id: { $gt: id(1) } });
    expect(seen).toEqual([id(5), id(4), id(3), id(2)]);
    expect(sent[1]).toEqual({ $and: [{ _id: { $gt: id(1) } }, { _id: { $lt: id(5) } }] });
  });

  it("pages in creation order with oldestFirst, the cursor above the last id", async () => {
    const { seen, sent } = await paged({ org: "b" }, true);
    expect(seen).toEqual([id(2), id(4)]);
    expect(sent[1]).toEqual({ org: "b", _id: { $gt: id(2) } });
  });
});
