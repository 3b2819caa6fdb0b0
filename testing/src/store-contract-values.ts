/**
 * The store contract's values: the group inserter's batching, values stored and read back as they
 * were, and the portable subset (what every backend refuses alike).
 */
import {
  type Collection,
  createGroupInserter,
  type Doc,
  DuplicateKeyError,
  decodeJson,
  encodeJson,
  type Filter,
  type Update,
} from "@kiln/kit/store";
import { describe, expect, it } from "vitest";
import { type Account, type Item, ids, type StoreUnderTest } from "./store-contract-fixtures.js";

export function describeStoreValues(t: StoreUnderTest): void {
  describe("group inserter", () => {
    /** Counts the commands the inserter sends. */
    function counted<T extends Doc>(c: Collection<T>) {
      const calls = { one: 0, many: [] as number[] };
      const view: Collection<T> = {
        ...c,
        insertOne: (doc) => {
          calls.one++;
          return c.insertOne(doc);
        },
        insertMany: (docs) => {
          calls.many.push(docs.length);
          return c.insertMany(docs);
        },
        insertUnordered: (docs) => {
          calls.many.push(docs.length);
          return c.insertUnordered(docs);
        },
      };
      return { view, calls };
    }

    it("sends one insert alone, and what arrives while it is written as one batch insert", async () => {
      const items = t.store.collection<Item>("group_insert");
      const { view, calls } = counted(items);
      const inserter = createGroupInserter(view);
      await inserter.insert({ _id: "g00", n: 0 });
      expect(calls).toEqual({ one: 1, many: [] });
      const docs = Array.from({ length: 20 }, (_, i) => ({ _id: `g${String(i + 1).padStart(2, "0")}`, n: i + 1 }));
      await Promise.all(docs.map((d) => inserter.insert(d)));
      // Handed over together, they go out together (at most the first alone).
      expect(calls.one + calls.many.reduce((a, b) => a + b, 0)).toBe(21);
      expect(calls.one + calls.many.length).toBeLessThanOrEqual(3);
      expect(await items.find({}, { sort: { _id: 1 } })).toEqual([{ _id: "g00", n: 0 }, ...docs]);
    });

    it("gives each caller its own outcome when a batch fails", async () => {
      const items = await t.seeded<Account>("group_insert_clash", [{ _id: "a0", handle: "h0" }]);
      await t.store.ensureIndexes("group_insert_clash", [{ keys: { handle: 1 }, unique: true }]);
      const inserter = createGroupInserter(items);
      const outcomes = await Promise.allSettled([
        inserter.insert({ _id: "a1", handle: "h1" }),
        inserter.insert({ _id: "a2", handle: "h2" }),
        inserter.insert({ _id: "a3", handle: "h0" }),
        inserter.insert({ _id: "a4", handle: "h4" }),
        inserter.insert({ _id: "a5", handle: "h1" }),
        inserter.insert({ _id: "a6", handle: "h6" }),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual([
        "fulfilled",
        "fulfilled",
        "rejected",
        "fulfilled",
        "rejected",
        "fulfilled",
      ]);
      for (const o of outcomes) if (o.status === "rejected") expect(o.reason).toBeInstanceOf(DuplicateKeyError);
      expect(ids(await items.find({}, { sort: { _id: 1 } }))).toEqual(["a0", "a1", "a2", "a4", "a6"]);
    });
  });

  describe("values", () => {
    it("keeps free-form JSON stored with encodeJson exactly: odd keys, key order, nesting", async () => {
      const text =
        '{"z":1,"$ref":"#/a","a.b":{"$id":[1,{"__proto__":{"polluted":true}}]},"__proto__":null,"m":"\\u0000"}';
      const value = JSON.parse(text) as Record<string, unknown>;
      const c = t.store.collection<Doc & { schema: string }>("values_json");
      await c.insertOne({ _id: "j", schema: encodeJson(value) });
      const stored = (await c.findOne({ _id: "j" }))?.schema ?? "";
      expect(stored).toBe(text);
      const decoded = decodeJson<Record<string, unknown>>(stored);
      expect(Object.keys(decoded)).toEqual(["z", "$ref", "a.b", "__proto__", "m"]);
      expect(decoded).toEqual(value);
      expect(Reflect.get({}, "polluted")).toBeUndefined();
    });

    it("returns Dates as Dates and compares them in queries and sorts", async () => {
      const c = await t.seeded<Item>("values_dates", [
        { _id: "a", at: new Date("2026-01-02T03:04:05.678Z") },
        { _id: "b", at: new Date("2025-01-01T00:00:00.000Z") },
        { _id: "c", at: new Date("2027-06-01T00:00:00.000Z") },
      ]);
      const a = await c.findOne({ _id: "a" });
      expect(a?.at).toBeInstanceOf(Date);
      expect(a?.at?.toISOString()).toBe("2026-01-02T03:04:05.678Z");
      const after = await c.find({ at: { $gt: new Date("2025-06-01T00:00:00Z") } }, { sort: { at: -1 } });
      expect(ids(after)).toEqual(["c", "a"]);
    });

    it("keeps numbers, booleans, strings starting with $ and nested documents", async () => {
      const doc = {
        _id: "v",
        int: 42,
        neg: -7,
        big: 2 ** 40,
        frac: 0.125,
        yes: true,
        s: "$notAnOperator",
        o: { p: [1, "two", { q: null }] },
      };
      const c = t.store.collection<typeof doc>("values_scalars");
      await c.insertOne(doc);
      expect(await c.findOne({ _id: "v" })).toEqual(doc);
    });
  });

  describe("portable subset", () => {
    const notPortable = /not portable/;

    it("refuses documents FerretDB 1.24 refuses, writing nothing", async () => {
      const c = t.store.collection<Doc & Record<string, unknown>>("portable_documents");
      const refused: Record<string, unknown>[] = [
        { "a.b": 1 },
        { $x: 1 },
        { o: { "deep.key": 1 } },
        { o: { $ref: "x" } },
        { list: [[1, 2]] },
        { n: Number.NaN },
        { n: Number.POSITIVE_INFINITY },
        { s: "nul\0char" },
      ];
      for (const fields of refused) {
        await expect(c.insertOne({ _id: "d", ...fields })).rejects.toThrow(notPortable);
      }
      await c.insertOne({ _id: "ok", n: 1, list: [1] });
      await expect(c.updateOne({ _id: "ok" }, { $set: { n: Number.NaN } })).rejects.toThrow(notPortable);
      await expect(c.updateOne({ _id: "ok" }, { $push: { list: [2] } })).rejects.toThrow(notPortable);
      await expect(c.replaceOne({ _id: "ok" }, { _id: "ok", "a.b": 1 })).rejects.toThrow(notPortable);
      expect(await c.find({})).toEqual([{ _id: "ok", n: 1, list: [1] }]);
    });

    it("refuses query and update operators outside the portable subset", async () => {
      const c = await t.seeded<Item>("portable_operators", [{ _id: "a", n: 1, tags: ["x"] }]);
      const filters: Filter[] = [
        { $where: "this.n > 0" },
        { $expr: { $gt: ["$n", 0] } },
        { $text: { $search: "x" } },
        { n: { $lookup: "other" } },
        { n: { $gt: 0, plain: 1 } },
      ];
      for (const filter of filters) {
        await expect(c.find(filter)).rejects.toThrow(notPortable);
      }
      const updates = [
        { $lookup: { from: "other" } },
        { $set: { "tags.$": "y" } },
        { $set: { "tags.$[]": "y" } },
        { $push: { tags: { $each: ["y"], $slice: 1 } } },
        { $set: { _id: "b" } },
      ] as unknown as Update[];
      for (const update of updates) {
        await expect(c.updateOne({ _id: "a" }, update)).rejects.toThrow(notPortable);
      }
      expect(await c.findOne({ _id: "a" })).toEqual({ _id: "a", n: 1, tags: ["x"] });
    });
  });
}
