/**
 * The behaviour every `Store` backend must share: run by memory-store.test.ts
 * against mingo and by mongo-store.int.test.ts against FerretDB. Each test uses its own collection.
 * Order among equal sort keys is unspecified on the servers, so sorts here always end on `_id`.
 */

import {
  type Collection,
  createGroupInserter,
  type Doc,
  DuplicateKeyError,
  decodeJson,
  encodeJson,
  type Filter,
  isDuplicateKeyError,
  type Store,
  type Update,
} from "@kiln/kit/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

interface Item extends Doc {
  name?: string | null;
  n?: number | null;
  tags?: string[];
  owner?: { id: string; role?: string };
  at?: Date;
}

interface Job extends Doc {
  status: "queued" | "running" | "done";
  priority: number;
  worker?: string;
  attempts?: number;
}

interface Account extends Doc {
  email?: string;
  team?: string;
  org?: string;
  handle?: string;
  createdAt?: Date;
  logins?: number;
}

/** Resolves to the error a promise rejects with; fails the test if it resolves. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}

async function expectDuplicateKey(promise: Promise<unknown>): Promise<void> {
  const e = await rejectionOf(promise);
  expect(e).toBeInstanceOf(DuplicateKeyError);
  expect(isDuplicateKeyError(e) && e.code).toBe(11000);
}

const ids = (docs: Doc[]) => docs.map((d) => d._id);

export function describeStoreContract(
  name: string,
  makeStore: () => Promise<{ store: Store; cleanup: () => Promise<void> }>,
): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      ({ store, cleanup } = await makeStore());
    });
    afterAll(async () => {
      await cleanup();
    });

    /** A collection seeded with `docs`. */
    async function seeded<T extends Doc>(collection: string, docs: T[]): Promise<Collection<T>> {
      const c = store.collection<T>(collection);
      await c.insertMany(docs);
      return c;
    }

    describe("ping", () => {
      it("resolves when the backend answers", async () => {
        await expect(store.ping()).resolves.toBeUndefined();
      });
    });

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
        };
        return { view, calls };
      }

      it("sends one insert alone, and what arrives while it is written as one insertMany", async () => {
        const items = store.collection<Item>("group_insert");
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
        const items = await seeded<Account>("group_insert_clash", [{ _id: "a0", handle: "h0" }]);
        await store.ensureIndexes("group_insert_clash", [{ keys: { handle: 1 }, unique: true }]);
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

    describe("insert and find", () => {
      it("finds an inserted document by _id, equal to what was inserted", async () => {
        const items = store.collection<Item>("crud_insert_find");
        expect(items.name).toBe("crud_insert_find");
        const doc: Item = { _id: "i1", name: "first", n: 3, tags: ["a", "b"], owner: { id: "u1", role: "admin" } };
        await items.insertOne(doc);
        expect(await items.findOne({ _id: "i1" })).toEqual(doc);
        expect(await items.findOne({ _id: "nope" })).toBeNull();
        expect(await items.find({ name: "nobody" })).toEqual([]);
      });

      it("shares data between views of the same collection, not across collections", async () => {
        await store.collection<Item>("crud_views_a").insertOne({ _id: "v1", name: "a" });
        expect(await store.collection<Item>("crud_views_a").findOne({ _id: "v1" })).toEqual({ _id: "v1", name: "a" });
        expect(await store.collection<Item>("crud_views_b").findOne({ _id: "v1" })).toBeNull();
      });

      it("insertMany stops at the first clash and keeps the documents before it", async () => {
        const items = await seeded<Item>("crud_insert_many", [{ _id: "a" }]);
        await expectDuplicateKey(items.insertMany([{ _id: "b" }, { _id: "a" }, { _id: "c" }]));
        expect(ids(await items.find({}, { sort: { _id: 1 } }))).toEqual(["a", "b"]);
      });

      it("counts matching documents, and zero in a collection never written", async () => {
        const items = await seeded<Item>("crud_count", [
          { _id: "1", n: 1 },
          { _id: "2", n: 2 },
          { _id: "3", n: 3 },
        ]);
        expect(await items.countDocuments({})).toBe(3);
        expect(await items.countDocuments({ n: { $gte: 2 } })).toBe(2);
        expect(await store.collection("crud_count_never_written").countDocuments({})).toBe(0);
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
        const c = await seeded("sort_keys", jobs);
        expect(ids(await c.find({}, { sort: { priority: -1, _id: 1 } }))).toEqual(["j4", "j1", "j3", "j2", "j5"]);
        expect(ids(await c.find({}, { sort: { priority: 1, _id: -1 } }))).toEqual(["j5", "j2", "j3", "j1", "j4"]);
      });

      it("pages through ties with skip and limit without overlap or gaps", async () => {
        const c = await seeded("sort_pages", jobs);
        const page = (skip: number) => c.find({}, { sort: { priority: 1, _id: 1 }, skip, limit: 2 });
        const pages = [await page(0), await page(2), await page(4), await page(6)];
        expect(pages.map(ids)).toEqual([["j2", "j5"], ["j1", "j3"], ["j4"], []]);
      });

      it("applies a filter before sorting and limiting", async () => {
        const c = await seeded("sort_filtered", jobs);
        const top = await c.find({ status: "queued" }, { sort: { priority: -1, _id: -1 }, limit: 3 });
        expect(ids(top)).toEqual(["j3", "j1", "j5"]);
        expect(await c.find({}, { limit: 2 })).toHaveLength(2);
      });

      it("sorts null and missing values before numbers ascending, after them descending", async () => {
        const c = await seeded<Item>("sort_nulls", [
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
        const c = await seeded("query_compare", items);
        expect(await find(c, { name: { $in: ["alpha", "gamma", "zeta"] } })).toEqual(["a", "c"]);
        expect(await find(c, { name: { $nin: ["alpha", "gamma"] } })).toEqual(["b", "d"]);
        expect(await find(c, { n: { $lt: 5 } })).toEqual(["a"]);
        expect(await find(c, { n: { $lte: 5 } })).toEqual(["a", "b"]);
        expect(await find(c, { n: { $gt: 5, $lte: 10 } })).toEqual(["c", "d"]);
        expect(await find(c, { n: { $gte: 7 } })).toEqual(["c", "d"]);
        expect(await find(c, { name: { $ne: "beta" } })).toEqual(["a", "c", "d"]);
      });

      it("finds, sorts, pages and deletes by a list of ids", async () => {
        const c = await seeded("query_id_list", items);
        expect(await find(c, { _id: { $in: ["c", "a", "zz", "a"] } })).toEqual(["a", "c"]);
        expect(ids(await c.find({ _id: { $in: ["a", "b", "c"] } }, { sort: { _id: -1 }, limit: 2 }))).toEqual([
          "c",
          "b",
        ]);
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

      it("combines conditions with $or, $and and several fields", async () => {
        const c = await seeded("query_logic", items);
        expect(await find(c, { $or: [{ n: { $lt: 2 } }, { name: "gamma" }] })).toEqual(["a", "c"]);
        expect(await find(c, { $and: [{ n: { $gt: 1 } }, { n: { $lt: 10 } }] })).toEqual(["b", "d"]);
        expect(await find(c, { n: { $gt: 1 }, name: { $ne: null } })).toEqual(["b", "c"]);
        expect(await find(c, { $or: [{ _id: "a" }, { _id: "b" }], n: 5 })).toEqual(["b"]);
      });

      it("tests presence with $exists", async () => {
        const c = await seeded("query_exists", items);
        expect(await find(c, { tags: { $exists: true } })).toEqual(["a", "b"]);
        expect(await find(c, { tags: { $exists: false } })).toEqual(["c", "d"]);
      });

      it("matches array elements by equality and $in, and nested fields by dotted path", async () => {
        const c = await seeded("query_arrays", items);
        expect(await find(c, { tags: "x" })).toEqual(["a"]);
        expect(await find(c, { tags: { $in: ["y", "z"] } })).toEqual(["a", "b"]);
        expect(await find(c, { "owner.id": "u2" })).toEqual(["b"]);
      });

      it("treats a user-supplied string as a literal value, never as an operator", async () => {
        const inputs = ["$gt", "$ne", "$exists", "$where", '{"$gt":""}', "$"];
        const c = await seeded<Item>(
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
        const c = await seeded<Item>("null_missing", [
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
        const c = await seeded<Item>("null_unset", [{ _id: "u", name: "x", n: 1 }]);
        await c.updateOne({ _id: "u" }, { $unset: { name: "" } });
        const doc = await c.findOne({ _id: "u" });
        expect(doc).toEqual({ _id: "u", n: 1 });
        expect(doc && "name" in doc).toBe(false);
      });
    });

    describe("projection", () => {
      const doc: Item = { _id: "p", name: "x", n: 2, owner: { id: "u1", role: "r" } };

      it("an inclusion projection keeps _id unless it is excluded", async () => {
        const c = await seeded("projection_include", [doc]);
        expect(await c.find({}, { projection: { name: 1 } })).toEqual([{ _id: "p", name: "x" }]);
        expect(await c.find({}, { projection: { _id: 0, n: 1 } })).toEqual([{ n: 2 }]);
        expect(await c.findOne({ _id: "p" }, { projection: { "owner.id": 1 } })).toEqual({
          _id: "p",
          owner: { id: "u1" },
        });
      });

      it("an exclusion projection drops only the named fields", async () => {
        const c = await seeded("projection_exclude", [doc]);
        expect(await c.findOne({ _id: "p" }, { projection: { owner: 0, n: 0 } })).toEqual({ _id: "p", name: "x" });
      });

      it("sorts on a field the projection leaves out", async () => {
        const c = await seeded<Item>("projection_sort", [
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

    describe("unique indexes", () => {
      it("_id is unique", async () => {
        const c = await seeded<Account>("unique_id", [{ _id: "a1", email: "a@x" }]);
        await expectDuplicateKey(c.insertOne({ _id: "a1", email: "other@x" }));
        expect(await c.find({})).toEqual([{ _id: "a1", email: "a@x" }]);
      });

      it("a unique index refuses a second equal value; a plain index does not", async () => {
        await store.ensureIndexes("unique_single", [{ keys: { email: 1 }, unique: true }, { keys: { team: 1 } }]);
        const c = await seeded<Account>("unique_single", [
          { _id: "a1", email: "a@x", team: "t" },
          { _id: "a2", email: "b@x", team: "t" },
        ]);
        await expectDuplicateKey(c.insertOne({ _id: "a3", email: "a@x", team: "u" }));
        expect(await c.countDocuments({})).toBe(2);
      });

      it("a compound unique index clashes only when every key matches", async () => {
        await store.ensureIndexes("unique_compound", [
          { keys: { org: 1, handle: 1 }, unique: true, name: "org_handle" },
        ]);
        const c = await seeded<Account>("unique_compound", [
          { _id: "a1", org: "o1", handle: "h" },
          { _id: "a2", org: "o2", handle: "h" },
          { _id: "a3", org: "o1", handle: "k" },
        ]);
        await expectDuplicateKey(c.insertOne({ _id: "a4", org: "o2", handle: "h" }));
        expect(await c.countDocuments({})).toBe(3);
      });

      it("ensureIndexes is idempotent, works before the first write and adds only new indexes", async () => {
        const indexes = [{ keys: { email: 1 as const }, unique: true }];
        await store.ensureIndexes("unique_idempotent", indexes);
        await store.ensureIndexes("unique_idempotent", indexes);
        await store.ensureIndexes("unique_idempotent", [...indexes, { keys: { handle: 1 }, unique: true }]);
        const c = await seeded<Account>("unique_idempotent", [{ _id: "a1", email: "a@x", handle: "h" }]);
        await expectDuplicateKey(c.insertOne({ _id: "a2", email: "a@x", handle: "k" }));
        await expectDuplicateKey(c.insertOne({ _id: "a3", email: "b@x", handle: "h" }));
      });

      it("refuses updates, upserts, replacements and claims that would clash, leaving documents unchanged", async () => {
        await store.ensureIndexes("unique_writes", [{ keys: { email: 1 }, unique: true }]);
        const original: Account[] = [
          { _id: "a1", email: "a@x", team: "t" },
          { _id: "a2", email: "b@x", team: "t" },
        ];
        const c = await seeded<Account>("unique_writes", original);
        await expectDuplicateKey(c.updateOne({ _id: "a2" }, { $set: { email: "a@x" } }));
        await expectDuplicateKey(c.updateOne({ _id: "a3" }, { $set: { email: "a@x" } }, { upsert: true }));
        await expectDuplicateKey(c.replaceOne({ _id: "a2" }, { _id: "a2", email: "a@x" }));
        await expectDuplicateKey(c.replaceOne({ _id: "a3" }, { _id: "a3", email: "b@x" }, { upsert: true }));
        await expectDuplicateKey(c.findOneAndUpdate({ _id: "a2" }, { $set: { email: "a@x" } }));
        expect(await c.find({}, { sort: { _id: 1 } })).toEqual(original);
        await expectDuplicateKey(c.updateMany({ team: "t" }, { $set: { email: "same@x" } }));
        expect(await c.countDocuments({ email: "same@x" })).toBeLessThanOrEqual(1);
      });
    });

    describe("updates", () => {
      it("updateOne reports matched and modified counts, including a no-op", async () => {
        const c = await seeded<Item>("update_counts", [{ _id: "a", n: 1 }]);
        expect(await c.updateOne({ _id: "zz" }, { $set: { n: 2 } })).toEqual({ matchedCount: 0, modifiedCount: 0 });
        expect(await c.updateOne({ _id: "a" }, { $set: { n: 1 } })).toEqual({ matchedCount: 1, modifiedCount: 0 });
        expect(await c.updateOne({ _id: "a" }, { $set: { n: 2 } })).toEqual({ matchedCount: 1, modifiedCount: 1 });
        expect(await c.findOne({ _id: "a" })).toEqual({ _id: "a", n: 2 });
      });

      it("applies $inc, $push, $addToSet, $pull and dotted $set", async () => {
        const c = await seeded<Item>("update_operators", [{ _id: "a", n: 1, tags: ["x"] }]);
        await c.updateOne({ _id: "a" }, { $inc: { n: 2 }, $push: { tags: "y" }, $set: { "owner.id": "u1" } });
        await c.updateOne({ _id: "a" }, { $addToSet: { tags: "x" }, $inc: { attempts: 1 } });
        await c.updateOne({ _id: "a" }, { $addToSet: { tags: "z" } });
        await c.updateOne({ _id: "a" }, { $pull: { tags: "x" }, $push: { more: { $each: ["p", "q"] } } });
        expect(await c.findOne({ _id: "a" })).toEqual({
          _id: "a",
          n: 3,
          tags: ["y", "z"],
          owner: { id: "u1" },
          attempts: 1,
          more: ["p", "q"],
        });
      });

      it("updateMany updates every match and counts the ones it changed", async () => {
        const c = await seeded<Job>("update_many", [
          { _id: "1", status: "queued", priority: 1 },
          { _id: "2", status: "queued", priority: 2 },
          { _id: "3", status: "queued", priority: 9 },
          { _id: "4", status: "done", priority: 1 },
        ]);
        const result = await c.updateMany({ status: "queued" }, { $set: { priority: 9 } });
        expect(result).toEqual({ matchedCount: 3, modifiedCount: 2 });
        expect(await c.countDocuments({ priority: 9 })).toBe(3);
        expect(await c.findOne({ _id: "4" })).toEqual({ _id: "4", status: "done", priority: 1 });
        expect(await c.updateMany({ status: "running" }, { $set: { priority: 0 } })).toEqual({
          matchedCount: 0,
          modifiedCount: 0,
        });
      });

      it("an upsert inserts the filter's equalities and $setOnInsert; a second one applies only $set", async () => {
        const c = store.collection<Account>("update_upsert");
        const first = await c.updateOne(
          { _id: "a1", team: "t" },
          { $set: { email: "a@x" }, $setOnInsert: { createdAt: new Date(1_000), logins: 0 } },
          { upsert: true },
        );
        expect(first).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: "a1" });
        const second = await c.updateOne(
          { _id: "a1", team: "t" },
          { $set: { email: "b@x" }, $setOnInsert: { createdAt: new Date(2_000), logins: 5 } },
          { upsert: true },
        );
        expect(second).toEqual({ matchedCount: 1, modifiedCount: 1 });
        expect(await c.findOne({ _id: "a1" })).toEqual({
          _id: "a1",
          team: "t",
          email: "b@x",
          createdAt: new Date(1_000),
          logins: 0,
        });
      });

      it("an upsert on a natural key takes its _id from $setOnInsert", async () => {
        await store.ensureIndexes("update_upsert_key", [{ keys: { email: 1 }, unique: true }]);
        const c = store.collection<Account>("update_upsert_key");
        const upsert = (id: string) =>
          c.updateOne({ email: "a@x" }, { $inc: { logins: 1 }, $setOnInsert: { _id: id } }, { upsert: true });
        expect(await upsert("first")).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: "first" });
        expect(await upsert("second")).toEqual({ matchedCount: 1, modifiedCount: 1 });
        expect(await c.find({})).toEqual([{ _id: "first", email: "a@x", logins: 2 }]);
      });

      it("refuses an upsert that names no string _id, before writing anything", async () => {
        const c = store.collection<Account>("update_upsert_no_id");
        await expect(c.updateOne({ email: "a@x" }, { $set: { team: "t" } }, { upsert: true })).rejects.toThrow(/_id/);
        await expect(c.findOneAndUpdate({ email: "a@x" }, { $set: { team: "t" } }, { upsert: true })).rejects.toThrow(
          /_id/,
        );
        expect(await c.countDocuments({})).toBe(0);
      });
    });

    describe("findOneAndUpdate", () => {
      it("returns the document after the update by default, and before it on request", async () => {
        const c = await seeded<Job>("fau_return", [{ _id: "j", status: "queued", priority: 1 }]);
        expect(await c.findOneAndUpdate({ _id: "j" }, { $inc: { attempts: 1 } })).toEqual({
          _id: "j",
          status: "queued",
          priority: 1,
          attempts: 1,
        });
        const before = await c.findOneAndUpdate({ _id: "j" }, { $inc: { attempts: 1 } }, { returnDocument: "before" });
        expect(before?.attempts).toBe(1);
        expect((await c.findOne({ _id: "j" }))?.attempts).toBe(2);
      });

      it("claims the first document in sort order", async () => {
        const c = await seeded<Job>("fau_sort", [
          { _id: "j1", status: "queued", priority: 1 },
          { _id: "j2", status: "queued", priority: 5 },
          { _id: "j3", status: "queued", priority: 5 },
          { _id: "j4", status: "done", priority: 9 },
        ]);
        const claim = () =>
          c.findOneAndUpdate(
            { status: "queued" },
            { $set: { status: "running" } },
            { sort: { priority: -1, _id: 1 }, returnDocument: "after" },
          );
        expect(await claim()).toEqual({ _id: "j2", status: "running", priority: 5 });
        expect((await claim())?._id).toBe("j3");
        expect((await claim())?._id).toBe("j1");
        expect(await claim()).toBeNull();
      });

      it("lets exactly one of two concurrent claims win a single queued document", async () => {
        const c = await seeded<Job>("fau_race_one", [{ _id: "only", status: "queued", priority: 1 }]);
        const claim = (worker: string) =>
          c.findOneAndUpdate({ status: "queued" }, { $set: { status: "running", worker } }, { sort: { priority: -1 } });
        const results = await Promise.all([claim("w1"), claim("w2")]);
        const winners = results.filter((r) => r !== null);
        expect(winners).toHaveLength(1);
        expect((await c.findOne({ _id: "only" }))?.worker).toBe(winners[0]?.worker);
      });

      it("hands each of several queued documents to exactly one of many concurrent claimers", async () => {
        const queued = ["q1", "q2", "q3", "q4"].map((_id): Job => ({ _id, status: "queued", priority: 1 }));
        const c = await seeded<Job>("fau_race_many", queued);
        const workers = Array.from({ length: 10 }, (_, i) => `w${i}`);
        const results = await Promise.all(
          workers.map((worker) =>
            c.findOneAndUpdate({ status: "queued" }, { $set: { status: "running", worker } }, { sort: { _id: 1 } }),
          ),
        );
        const claimed = results.filter((r) => r !== null);
        expect(ids(claimed).sort()).toEqual(["q1", "q2", "q3", "q4"]);
        expect(new Set(claimed.map((r) => r.worker)).size).toBe(4);
        expect(await c.countDocuments({ status: "running" })).toBe(4);
      });

      it("loses no increment when many updates of one document run concurrently", async () => {
        const c = await seeded<Job>("fau_concurrent_inc", [{ _id: "j", status: "queued", priority: 0 }]);
        const results = await Promise.all([
          ...Array.from({ length: 10 }, () => c.updateOne({ _id: "j" }, { $inc: { priority: 1 } })),
          ...Array.from({ length: 10 }, () => c.findOneAndUpdate({ _id: "j" }, { $inc: { attempts: 1 } })),
        ]);
        expect(results.filter((r) => r !== null)).toHaveLength(20);
        expect(await c.findOne({ _id: "j" })).toEqual({ _id: "j", status: "queued", priority: 10, attempts: 10 });
      });

      it("returns null when nothing matches, and upserts on request", async () => {
        const c = store.collection<Job>("fau_upsert");
        expect(await c.findOneAndUpdate({ _id: "j" }, { $set: { priority: 1 } })).toBeNull();
        expect(await c.countDocuments({})).toBe(0);
        const set: Update = { $set: { priority: 1 }, $setOnInsert: { status: "queued" } };
        expect(await c.findOneAndUpdate({ _id: "j1" }, set, { upsert: true })).toEqual({
          _id: "j1",
          priority: 1,
          status: "queued",
        });
        expect(await c.findOneAndUpdate({ _id: "j2" }, set, { upsert: true, returnDocument: "before" })).toBeNull();
        expect(ids(await c.find({}, { sort: { _id: 1 } }))).toEqual(["j1", "j2"]);
      });
    });

    describe("replaceOne", () => {
      it("replaces the whole document, keeping _id, and upserts on request", async () => {
        const c = await seeded<Item>("replace_whole", [{ _id: "r", name: "old", n: 1, tags: ["t"] }]);
        expect(await c.replaceOne({ _id: "r" }, { _id: "r", name: "new" })).toEqual({
          matchedCount: 1,
          modifiedCount: 1,
        });
        expect(await c.findOne({ _id: "r" })).toEqual({ _id: "r", name: "new" });
        expect(await c.replaceOne({ name: "nobody" }, { _id: "x", name: "x" })).toEqual({
          matchedCount: 0,
          modifiedCount: 0,
        });
        expect(await c.replaceOne({ _id: "s" }, { _id: "s", n: 2 }, { upsert: true })).toEqual({
          matchedCount: 0,
          modifiedCount: 0,
          upsertedId: "s",
        });
        expect(ids(await c.find({}, { sort: { _id: 1 } }))).toEqual(["r", "s"]);
      });

      it("refuses to change _id", async () => {
        const c = await seeded<Item>("replace_id", [{ _id: "r", name: "old" }]);
        await expect(c.replaceOne({ _id: "r" }, { _id: "other", name: "new" })).rejects.toThrow(/_id/);
        expect(await c.find({})).toEqual([{ _id: "r", name: "old" }]);
      });
    });

    describe("delete", () => {
      it("deleteOne removes one match; deleteMany removes all matches; both report counts", async () => {
        const c = await seeded<Job>("delete_counts", [
          { _id: "1", status: "done", priority: 1 },
          { _id: "2", status: "done", priority: 1 },
          { _id: "3", status: "done", priority: 1 },
          { _id: "4", status: "queued", priority: 1 },
        ]);
        expect(await c.deleteOne({ status: "done" })).toEqual({ deletedCount: 1 });
        expect(await c.countDocuments({ status: "done" })).toBe(2);
        expect(await c.deleteMany({ status: "done" })).toEqual({ deletedCount: 2 });
        expect(await c.deleteMany({ status: "done" })).toEqual({ deletedCount: 0 });
        expect(await c.deleteOne({ _id: "nope" })).toEqual({ deletedCount: 0 });
        expect(ids(await c.find({}))).toEqual(["4"]);
      });
    });

    describe("values", () => {
      it("keeps free-form JSON stored with encodeJson exactly: odd keys, key order, nesting", async () => {
        const text =
          '{"z":1,"$ref":"#/a","a.b":{"$id":[1,{"__proto__":{"polluted":true}}]},"__proto__":null,"m":"\\u0000"}';
        const value = JSON.parse(text) as Record<string, unknown>;
        const c = store.collection<Doc & { schema: string }>("values_json");
        await c.insertOne({ _id: "j", schema: encodeJson(value) });
        const stored = (await c.findOne({ _id: "j" }))?.schema ?? "";
        expect(stored).toBe(text);
        const decoded = decodeJson<Record<string, unknown>>(stored);
        expect(Object.keys(decoded)).toEqual(["z", "$ref", "a.b", "__proto__", "m"]);
        expect(decoded).toEqual(value);
        expect(Reflect.get({}, "polluted")).toBeUndefined();
      });

      it("returns Dates as Dates and compares them in queries and sorts", async () => {
        const c = await seeded<Item>("values_dates", [
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
        const c = store.collection<typeof doc>("values_scalars");
        await c.insertOne(doc);
        expect(await c.findOne({ _id: "v" })).toEqual(doc);
      });
    });

    describe("portable subset", () => {
      const notPortable = /not portable/;

      it("refuses documents FerretDB 1.24 refuses, writing nothing", async () => {
        const c = store.collection<Doc & Record<string, unknown>>("portable_documents");
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
        const c = await seeded<Item>("portable_operators", [{ _id: "a", n: 1, tags: ["x"] }]);
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
  });
}
