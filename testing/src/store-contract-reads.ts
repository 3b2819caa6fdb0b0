/**
 * The store contract's reads: ping, insert and find, sort/skip/limit, query operators, null and
 * missing fields, projection.
 */
import type { Collection, Filter } from "@kiln/kit/store";
import { describe, expect, it } from "vitest";
import { expectDuplicateKey, type Item, ids, type Job, type StoreUnderTest } from "./store-contract-fixtures.js";

export function describeStoreReads(t: StoreUnderTest): void {
  describe("ping", () => {
    it("resolves when the backend answers", async () => {
      await expect(t.store.ping()).resolves.toBeUndefined();
    });
  });

  describe("insert and find", () => {
    it("finds an inserted document by _id, equal to what was inserted", async () => {
      const items = t.store.collection<Item>("crud_insert_find");
      expect(items.name).toBe("crud_insert_find");
      const doc: Item = { _id: "i1", name: "first", n: 3, tags: ["a", "b"], owner: { id: "u1", role: "admin" } };
      await items.insertOne(doc);
      expect(await items.findOne({ _id: "i1" })).toEqual(doc);
      expect(await items.findOne({ _id: "nope" })).toBeNull();
      expect(await items.find({ name: "nobody" })).toEqual([]);
    });

    it("shares data between views of the same collection, not across collections", async () => {
      await t.store.collection<Item>("crud_views_a").insertOne({ _id: "v1", name: "a" });
      expect(await t.store.collection<Item>("crud_views_a").findOne({ _id: "v1" })).toEqual({ _id: "v1", name: "a" });
      expect(await t.store.collection<Item>("crud_views_b").findOne({ _id: "v1" })).toBeNull();
    });

    it("insertMany stops at the first clash and keeps the documents before it", async () => {
      const items = await t.seeded<Item>("crud_insert_many", [{ _id: "a" }]);
      await expectDuplicateKey(items.insertMany([{ _id: "b" }, { _id: "a" }, { _id: "c" }]));
      expect(ids(await items.find({}, { sort: { _id: 1 } }))).toEqual(["a", "b"]);
    });

    it("insertUnordered inserts all but the clashing documents and names their positions", async () => {
      await t.store.ensureIndexes("crud_insert_unordered", [{ keys: { name: 1 }, unique: true }]);
      const items = await t.seeded<Item>("crud_insert_unordered", [{ _id: "a", name: "x" }]);
      const clashed = await items.insertUnordered([
        { _id: "b", name: "b" },
        { _id: "a", name: "a" },
        { _id: "c", name: "x" },
        { _id: "d", name: "d" },
      ]);
      expect(clashed).toEqual([1, 2]);
      expect(ids(await items.find({}, { sort: { _id: 1 } }))).toEqual(["a", "b", "d"]);
      expect(await items.findOne({ _id: "a" })).toEqual({ _id: "a", name: "x" });
      expect(await items.insertUnordered([{ _id: "e" }])).toEqual([]);
    });

    it("counts matching documents, and zero in a collection never written", async () => {
      const items = await t.seeded<Item>("crud_count", [
        { _id: "1", n: 1 },
        { _id: "2", n: 2 },
        { _id: "3", n: 3 },
      ]);
      expect(await items.countDocuments({})).toBe(3);
      expect(await items.countDocuments({ n: { $gte: 2 } })).toBe(2);
      expect(await t.store.collection("crud_count_never_written").countDocuments({})).toBe(0);
    });
  });

  describe("sort, skip and limit", () => {
    const jobs: Job[] = [
      { _id: "j1", status: "queued", priority: 2 },
      { _id: "j2", status: "queued", priority: 1 },
      { _id: "j3", status: "queued", priority: 2 },
      { _id: "j4", status: "done", priority: 3 },
      { _id: "j5", status: "queued", priority: 1 },
    ];

    it("sorts on several keys, the second breaking ties of the first", async () => {
      const c = await t.seeded("sort_keys", jobs);
      expect(ids(await c.find({}, { sort: { priority: -1, _id: 1 } }))).toEqual(["j4", "j1", "j3", "j2", "j5"]);
      expect(ids(await c.find({}, { sort: { priority: 1, _id: -1 } }))).toEqual(["j5", "j2", "j3", "j1", "j4"]);
    });

    it("pages through ties with skip and limit without overlap or gaps", async () => {
      const c = await t.seeded("sort_pages", jobs);
      const page = (skip: number) => c.find({}, { sort: { priority: 1, _id: 1 }, skip, limit: 2 });
      const pages = [await page(0), await page(2), await page(4), await page(6)];
      expect(pages.map(ids)).toEqual([["j2", "j5"], ["j1", "j3"], ["j4"], []]);
    });

    it("applies a filter before sorting and limiting", async () => {
      const c = await t.seeded("sort_filtered", jobs);
      const top = await c.find({ status: "queued" }, { sort: { priority: -1, _id: -1 }, limit: 3 });
      expect(ids(top)).toEqual(["j3", "j1", "j5"]);
      expect(await c.find({}, { limit: 2 })).toHaveLength(2);
    });

    it("sorts null and missing values before numbers ascending, after them descending", async () => {
      const c = await t.seeded<Item>("sort_nulls", [
        { _id: "a", n: 5 },
        { _id: "b", n: null },
        { _id: "c" },
        { _id: "d", n: -1 },
      ]);
      expect(ids(await c.find({}, { sort: { n: 1, _id: 1 } }))).toEqual(["b", "c", "d", "a"]);
      expect(ids(await c.find({}, { sort: { n: -1, _id: 1 } }))).toEqual(["a", "d", "b", "c"]);
    });
  });

  describe("query operators", () => {
    const items: Item[] = [
      { _id: "a", name: "alpha", n: 1, tags: ["x", "y"], owner: { id: "u1" } },
      { _id: "b", name: "beta", n: 5, tags: ["y"], owner: { id: "u2" } },
      { _id: "c", name: "gamma", n: 10 },
      { _id: "d", name: null, n: 7 },
    ];
    const find = async (c: Collection<Item>, filter: Filter) => ids(await c.find(filter, { sort: { _id: 1 } }));

    it("compares with $in, $nin, $lt, $lte, $gt, $gte and $ne", async () => {
      const c = await t.seeded("query_compare", items);
      expect(await find(c, { name: { $in: ["alpha", "gamma", "zeta"] } })).toEqual(["a", "c"]);
      expect(await find(c, { name: { $nin: ["alpha", "gamma"] } })).toEqual(["b", "d"]);
      expect(await find(c, { n: { $lt: 5 } })).toEqual(["a"]);
      expect(await find(c, { n: { $lte: 5 } })).toEqual(["a", "b"]);
      expect(await find(c, { n: { $gt: 5, $lte: 10 } })).toEqual(["c", "d"]);
      expect(await find(c, { n: { $gte: 7 } })).toEqual(["c", "d"]);
      expect(await find(c, { name: { $ne: "beta" } })).toEqual(["a", "c", "d"]);
    });

    it("finds, sorts, pages and deletes by a list of ids", async () => {
      const c = await t.seeded("query_id_list", items);
      expect(await find(c, { _id: { $in: ["c", "a", "zz", "a"] } })).toEqual(["a", "c"]);
      expect(ids(await c.find({ _id: { $in: ["a", "b", "c"] } }, { sort: { _id: -1 }, limit: 2 }))).toEqual(["c", "b"]);
      expect(await find(c, { _id: { $in: ["a", "b", "c"] }, n: { $gt: 1 } })).toEqual(["b", "c"]);
      expect(ids(await c.find({ _id: { $in: ["a", "b", "d"] } }, { sort: { n: -1, _id: 1 } }))).toEqual([
        "d",
        "b",
        "a",
      ]);
      expect(await find(c, { _id: { $in: [] } })).toEqual([]);
      expect(await c.deleteMany({ _id: { $in: ["b", "d", "nope"] } })).toEqual({ deletedCount: 2 });
      expect(await find(c, {})).toEqual(["a", "c"]);
    });

    it("finds by $in on indexed fields (a batch of parents) as a scan would", async () => {
      await t.store.ensureIndexes("query_in_indexed", [{ keys: { name: 1, n: 1, _id: -1 } }]);
      const docs: Item[] = [
        ...items,
        { _id: "e", name: "alpha", n: 5 },
        { _id: "f", name: "beta", n: 1 },
        { _id: "g", n: 1 },
      ];
      const c = await t.seeded("query_in_indexed", docs);
      expect(await find(c, { name: { $in: ["beta", "alpha", "zeta", "alpha"] } })).toEqual(["a", "b", "e", "f"]);
      expect(await find(c, { name: { $in: ["alpha", "beta"] }, n: 1 })).toEqual(["a", "f"]);
      expect(await find(c, { name: { $in: ["alpha", "beta"] }, n: { $in: [5, 7] } })).toEqual(["b", "e"]);
      expect(await find(c, { $and: [{ name: "alpha" }, { n: { $in: [1, 5] } }] })).toEqual(["a", "e"]);
      // null matches null and missing, as with equality.
      expect(await find(c, { name: { $in: [null, "gamma"] } })).toEqual(["c", "d", "g"]);
      expect(await find(c, { name: { $in: ["alpha", "beta"] }, tags: "y" })).toEqual(["a", "b"]);
      const page = await c.find({ name: { $in: ["alpha", "beta"] } }, { sort: { _id: -1 }, limit: 3 });
      expect(ids(page)).toEqual(["f", "e", "b"]);
      expect(await find(c, { name: { $in: [] } })).toEqual([]);
    });

    it("combines conditions with $or, $and and several fields", async () => {
      const c = await t.seeded("query_logic", items);
      expect(await find(c, { $or: [{ n: { $lt: 2 } }, { name: "gamma" }] })).toEqual(["a", "c"]);
      expect(await find(c, { $and: [{ n: { $gt: 1 } }, { n: { $lt: 10 } }] })).toEqual(["b", "d"]);
      expect(await find(c, { n: { $gt: 1 }, name: { $ne: null } })).toEqual(["b", "c"]);
      expect(await find(c, { $or: [{ _id: "a" }, { _id: "b" }], n: 5 })).toEqual(["b"]);
    });

    it("tests presence with $exists", async () => {
      const c = await t.seeded("query_exists", items);
      expect(await find(c, { tags: { $exists: true } })).toEqual(["a", "b"]);
      expect(await find(c, { tags: { $exists: false } })).toEqual(["c", "d"]);
    });

    it("matches array elements by equality and $in, and nested fields by dotted path", async () => {
      const c = await t.seeded("query_arrays", items);
      expect(await find(c, { tags: "x" })).toEqual(["a"]);
      expect(await find(c, { tags: { $in: ["y", "z"] } })).toEqual(["a", "b"]);
      expect(await find(c, { "owner.id": "u2" })).toEqual(["b"]);
    });

    it("treats a user-supplied string as a literal value, never as an operator", async () => {
      const inputs = ["$gt", "$ne", "$exists", "$where", '{"$gt":""}', "$"];
      const c = await t.seeded<Item>(
        "query_literal_strings",
        inputs.map((name, i) => ({ _id: `s${i}`, name })),
      );
      await c.insertOne({ _id: "plain", name: "zzz" });
      for (const [i, input] of inputs.entries()) {
        expect(await find(c, { name: input })).toEqual([`s${i}`]);
        expect(await find(c, { name: { $eq: input } })).toEqual([`s${i}`]);
        expect(await find(c, { name: { $in: [input] } })).toEqual([`s${i}`]);
      }
    });
  });

  describe("null and missing fields", () => {
    it("matches null and missing with { field: null }; $exists tells them apart", async () => {
      const c = await t.seeded<Item>("null_missing", [
        { _id: "null", name: null },
        { _id: "missing" },
        { _id: "set", name: "x" },
      ]);
      expect(ids(await c.find({ name: null }, { sort: { _id: 1 } }))).toEqual(["missing", "null"]);
      expect(ids(await c.find({ name: { $exists: false } }))).toEqual(["missing"]);
      expect(ids(await c.find({ name: { $exists: true } }, { sort: { _id: 1 } }))).toEqual(["null", "set"]);
      expect(await c.findOne({ _id: "null" })).toEqual({ _id: "null", name: null });
      expect(Object.keys((await c.findOne({ _id: "missing" })) ?? {})).toEqual(["_id"]);
    });

    it("$unset removes the field rather than setting null", async () => {
      const c = await t.seeded<Item>("null_unset", [{ _id: "u", name: "x", n: 1 }]);
      await c.updateOne({ _id: "u" }, { $unset: { name: "" } });
      const doc = await c.findOne({ _id: "u" });
      expect(doc).toEqual({ _id: "u", n: 1 });
      expect(doc && "name" in doc).toBe(false);
    });
  });

  describe("projection", () => {
    const doc: Item = { _id: "p", name: "x", n: 2, owner: { id: "u1", role: "r" } };

    it("an inclusion projection keeps _id unless it is excluded", async () => {
      const c = await t.seeded("projection_include", [doc]);
      expect(await c.find({}, { projection: { name: 1 } })).toEqual([{ _id: "p", name: "x" }]);
      expect(await c.find({}, { projection: { _id: 0, n: 1 } })).toEqual([{ n: 2 }]);
      expect(await c.findOne({ _id: "p" }, { projection: { "owner.id": 1 } })).toEqual({
        _id: "p",
        owner: { id: "u1" },
      });
    });

    it("an exclusion projection drops only the named fields", async () => {
      const c = await t.seeded("projection_exclude", [doc]);
      expect(await c.findOne({ _id: "p" }, { projection: { owner: 0, n: 0 } })).toEqual({ _id: "p", name: "x" });
    });

    it("sorts on a field the projection leaves out", async () => {
      const c = await t.seeded<Item>("projection_sort", [
        { _id: "a", name: "a", n: 2 },
        { _id: "b", name: "b", n: 3 },
        { _id: "c", name: "c", n: 1 },
      ]);
      expect(await c.find({}, { sort: { n: -1 }, projection: { _id: 0, name: 1 } })).toEqual([
        { name: "b" },
        { name: "a" },
        { name: "c" },
      ]);
      expect(await c.findOne({}, { sort: { n: 1 }, projection: { name: 1 } })).toEqual({ _id: "c", name: "c" });
    });
  });
}
