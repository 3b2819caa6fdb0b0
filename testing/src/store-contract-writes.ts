/**
 * The store contract's writes: unique indexes, updates, findOneAndUpdate, replaceOne, delete.
 */
import type { Update } from "@kiln/kit/store";
import { describe, expect, it } from "vitest";
import {
  type Account,
  expectDuplicateKey,
  type Item,
  ids,
  type Job,
  type StoreUnderTest,
} from "./store-contract-fixtures.js";

export function describeStoreWrites(t: StoreUnderTest): void {
  describe("unique indexes", () => {
    it("_id is unique", async () => {
      const c = await t.seeded<Account>("unique_id", [{ _id: "a1", email: "a@x" }]);
      await expectDuplicateKey(c.insertOne({ _id: "a1", email: "other@x" }));
      expect(await c.find({})).toEqual([{ _id: "a1", email: "a@x" }]);
    });

    it("a unique index refuses a second equal value; a plain index does not", async () => {
      await t.store.ensureIndexes("unique_single", [{ keys: { email: 1 }, unique: true }, { keys: { team: 1 } }]);
      const c = await t.seeded<Account>("unique_single", [
        { _id: "a1", email: "a@x", team: "t" },
        { _id: "a2", email: "b@x", team: "t" },
      ]);
      await expectDuplicateKey(c.insertOne({ _id: "a3", email: "a@x", team: "u" }));
      expect(await c.countDocuments({})).toBe(2);
    });

    it("a compound unique index clashes only when every key matches", async () => {
      await t.store.ensureIndexes("unique_compound", [
        { keys: { org: 1, handle: 1 }, unique: true, name: "org_handle" },
      ]);
      const c = await t.seeded<Account>("unique_compound", [
        { _id: "a1", org: "o1", handle: "h" },
        { _id: "a2", org: "o2", handle: "h" },
        { _id: "a3", org: "o1", handle: "k" },
      ]);
      await expectDuplicateKey(c.insertOne({ _id: "a4", org: "o2", handle: "h" }));
      expect(await c.countDocuments({})).toBe(3);
    });

    it("ensureIndexes is idempotent, works before the first write and adds only new indexes", async () => {
      const indexes = [{ keys: { email: 1 as const }, unique: true }];
      await t.store.ensureIndexes("unique_idempotent", indexes);
      await t.store.ensureIndexes("unique_idempotent", indexes);
      await t.store.ensureIndexes("unique_idempotent", [...indexes, { keys: { handle: 1 }, unique: true }]);
      const c = await t.seeded<Account>("unique_idempotent", [{ _id: "a1", email: "a@x", handle: "h" }]);
      await expectDuplicateKey(c.insertOne({ _id: "a2", email: "a@x", handle: "k" }));
      await expectDuplicateKey(c.insertOne({ _id: "a3", email: "b@x", handle: "h" }));
    });

    it("refuses updates, upserts, replacements and claims that would clash, leaving documents unchanged", async () => {
      await t.store.ensureIndexes("unique_writes", [{ keys: { email: 1 }, unique: true }]);
      const original: Account[] = [
        { _id: "a1", email: "a@x", team: "t" },
        { _id: "a2", email: "b@x", team: "t" },
      ];
      const c = await t.seeded<Account>("unique_writes", original);
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
      const c = await t.seeded<Item>("update_counts", [{ _id: "a", n: 1 }]);
      expect(await c.updateOne({ _id: "zz" }, { $set: { n: 2 } })).toEqual({ matchedCount: 0, modifiedCount: 0 });
      expect(await c.updateOne({ _id: "a" }, { $set: { n: 1 } })).toEqual({ matchedCount: 1, modifiedCount: 0 });
      expect(await c.updateOne({ _id: "a" }, { $set: { n: 2 } })).toEqual({ matchedCount: 1, modifiedCount: 1 });
      expect(await c.findOne({ _id: "a" })).toEqual({ _id: "a", n: 2 });
    });

    it("applies $inc, $push, $addToSet, $pull and dotted $set", async () => {
      const c = await t.seeded<Item>("update_operators", [{ _id: "a", n: 1, tags: ["x"] }]);
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
      const c = await t.seeded<Job>("update_many", [
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
      const c = t.store.collection<Account>("update_upsert");
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
      await t.store.ensureIndexes("update_upsert_key", [{ keys: { email: 1 }, unique: true }]);
      const c = t.store.collection<Account>("update_upsert_key");
      const upsert = (id: string) =>
        c.updateOne({ email: "a@x" }, { $inc: { logins: 1 }, $setOnInsert: { _id: id } }, { upsert: true });
      expect(await upsert("first")).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: "first" });
      expect(await upsert("second")).toEqual({ matchedCount: 1, modifiedCount: 1 });
      expect(await c.find({})).toEqual([{ _id: "first", email: "a@x", logins: 2 }]);
    });

    it("refuses an upsert that names no string _id, before writing anything", async () => {
      const c = t.store.collection<Account>("update_upsert_no_id");
      await expect(c.updateOne({ email: "a@x" }, { $set: { team: "t" } }, { upsert: true })).rejects.toThrow(/_id/);
      await expect(c.findOneAndUpdate({ email: "a@x" }, { $set: { team: "t" } }, { upsert: true })).rejects.toThrow(
        /_id/,
      );
      expect(await c.countDocuments({})).toBe(0);
    });
  });

  describe("findOneAndUpdate", () => {
    it("returns the document after the update by default, and before it on request", async () => {
      const c = await t.seeded<Job>("fau_return", [{ _id: "j", status: "queued", priority: 1 }]);
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
      const c = await t.seeded<Job>("fau_sort", [
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
      const c = await t.seeded<Job>("fau_race_one", [{ _id: "only", status: "queued", priority: 1 }]);
      const claim = (worker: string) =>
        c.findOneAndUpdate({ status: "queued" }, { $set: { status: "running", worker } }, { sort: { priority: -1 } });
      const results = await Promise.all([claim("w1"), claim("w2")]);
      const winners = results.filter((r) => r !== null);
      expect(winners).toHaveLength(1);
      expect((await c.findOne({ _id: "only" }))?.worker).toBe(winners[0]?.worker);
    });

    it("hands each of several queued documents to exactly one of many concurrent claimers", async () => {
      const queued = ["q1", "q2", "q3", "q4"].map((_id): Job => ({ _id, status: "queued", priority: 1 }));
      const c = await t.seeded<Job>("fau_race_many", queued);
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
      const c = await t.seeded<Job>("fau_concurrent_inc", [{ _id: "j", status: "queued", priority: 0 }]);
      const results = await Promise.all([
        ...Array.from({ length: 10 }, () => c.updateOne({ _id: "j" }, { $inc: { priority: 1 } })),
        ...Array.from({ length: 10 }, () => c.findOneAndUpdate({ _id: "j" }, { $inc: { attempts: 1 } })),
      ]);
      expect(results.filter((r) => r !== null)).toHaveLength(20);
      expect(await c.findOne({ _id: "j" })).toEqual({ _id: "j", status: "queued", priority: 10, attempts: 10 });
    });

    it("returns null when nothing matches, and upserts on request", async () => {
      const c = t.store.collection<Job>("fau_upsert");
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
      const c = await t.seeded<Item>("replace_whole", [{ _id: "r", name: "old", n: 1, tags: ["t"] }]);
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
      const c = await t.seeded<Item>("replace_id", [{ _id: "r", name: "old" }]);
      await expect(c.replaceOne({ _id: "r" }, { _id: "other", name: "new" })).rejects.toThrow(/_id/);
      expect(await c.find({})).toEqual([{ _id: "r", name: "old" }]);
    });
  });

  describe("delete", () => {
    it("deleteOne removes one match; deleteMany removes all matches; both report counts", async () => {
      const c = await t.seeded<Job>("delete_counts", [
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
}
