import { describeStoreContract } from "@kiln/testing/store-contract";
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "./memory-store.js";
import { afterWrites, type Doc, DuplicateKeyError, type Filter, type Update } from "./store.js";

describeStoreContract("memory", async () => {
  const store = createMemoryStore();
  return { store, cleanup: () => store.close() };
});

type Loose = Doc & Record<string, unknown>;

describe("createMemoryStore", () => {
  it("keeps stores independent", async () => {
    const a = createMemoryStore();
    const b = createMemoryStore();
    await a.collection("c").insertOne({ _id: "x" });
    await b.ensureIndexes("c", [{ keys: { k: 1 }, unique: true }]);
    expect(await b.collection("c").countDocuments({})).toBe(0);
    await a.collection<Loose>("c").insertMany([
      { _id: "y", k: 1 },
      { _id: "z", k: 1 },
    ]);
    expect(await a.collection("c").countDocuments({})).toBe(3);
  });

  it("hands out copies: changing an inserted or returned document leaves the store alone", async () => {
    const c = createMemoryStore().collection<Doc & { list: number[]; o: { p: number }; flag?: boolean }>("c");
    const doc = { _id: "a", list: [1], o: { p: 1 } };
    await c.insertOne(doc);
    doc.list.push(2);
    doc.o.p = 2;
    const found = await c.findOne({ _id: "a" });
    expect(found).toEqual({ _id: "a", list: [1], o: { p: 1 } });
    found?.list.push(3);
    const claimed = await c.findOneAndUpdate({ _id: "a" }, { $set: { flag: true } });
    if (claimed) claimed.o.p = 9;
    expect(await c.findOne({ _id: "a" })).toEqual({ _id: "a", list: [1], o: { p: 1 }, flag: true });
  });

  it("stores _id first and undefined as null, as the driver sends them", async () => {
    const c = createMemoryStore().collection<Loose>("c");
    await c.insertOne({ z: 1, _id: "a", u: undefined } as Loose);
    const doc = await c.findOne({ _id: "a" });
    expect(Object.keys(doc ?? {})).toEqual(["_id", "z", "u"]);
    expect(doc?.u).toBeNull();
  });

  it("reports the clashing key in DuplicateKeyError.keyValue", async () => {
    const store = createMemoryStore();
    await store.ensureIndexes("c", [{ keys: { org: 1, handle: 1 }, unique: true }]);
    const c = store.collection<Loose>("c");
    await c.insertOne({ _id: "a", org: "o", handle: "h" });
    const clash = await c.insertOne({ _id: "b", org: "o", handle: "h" }).catch((e: unknown) => e);
    expect(clash).toBeInstanceOf(DuplicateKeyError);
    expect((clash as DuplicateKeyError).keyValue).toEqual({ org: "o", handle: "h" });
    expect((clash as DuplicateKeyError).message).toMatch(/E11000 .* index: org_1_handle_1/);
    const idClash = await c.insertOne({ _id: "a" }).catch((e: unknown) => e);
    expect((idClash as DuplicateKeyError).keyValue).toEqual({ _id: "a" });
  });

  it("counts a missing unique field as null, as MongoDB does (FerretDB 1.24 does not)", async () => {
    const store = createMemoryStore();
    await store.ensureIndexes("c", [{ keys: { email: 1 }, unique: true }]);
    const c = store.collection<Loose>("c");
    await c.insertOne({ _id: "a" });
    await expect(c.insertOne({ _id: "b" })).rejects.toThrow(DuplicateKeyError);
    await expect(c.insertOne({ _id: "c", email: null })).rejects.toThrow(DuplicateKeyError);
  });

  it("refuses arrays in uniquely indexed fields, which MongoDB and FerretDB index differently", async () => {
    const store = createMemoryStore();
    await store.ensureIndexes("c", [{ keys: { tags: 1 }, unique: true }]);
    await expect(store.collection<Loose>("c").insertOne({ _id: "a", tags: ["x"] })).rejects.toThrow(/not portable/);
  });

  it("fails to build a unique index over clashing documents, and refuses a conflicting index", async () => {
    const store = createMemoryStore();
    await store.collection<Loose>("c").insertMany([
      { _id: "a", k: 1 },
      { _id: "b", k: 1 },
    ]);
    await expect(store.ensureIndexes("c", [{ keys: { k: 1 }, unique: true }])).rejects.toThrow(DuplicateKeyError);
    await store.ensureIndexes("c", [{ keys: { k: 1 }, name: "by_k" }]);
    await expect(store.ensureIndexes("c", [{ keys: { j: 1 }, name: "by_k" }])).rejects.toThrow(/already exists/);
    await expect(store.ensureIndexes("c", [{ keys: { k: 1 }, name: "other" }])).rejects.toThrow(/already exists/);
  });

  it("updateMany stops at the first unique clash and keeps the updates before it", async () => {
    const store = createMemoryStore();
    await store.ensureIndexes("c", [{ keys: { k: 1 }, unique: true }]);
    const c = store.collection<Loose>("c");
    await c.insertMany([
      { _id: "1", k: 1 },
      { _id: "2", k: 2 },
      { _id: "3", k: 3 },
    ]);
    await expect(c.updateMany({}, { $set: { k: 9 } })).rejects.toThrow(DuplicateKeyError);
    expect(await c.find({}, { sort: { _id: 1 } })).toEqual([
      { _id: "1", k: 9 },
      { _id: "2", k: 2 },
      { _id: "3", k: 3 },
    ]);
  });

  describe("refuses what FerretDB 1.24 refuses", () => {
    const c = createMemoryStore().collection<Loose>("refusals");

    it.each([
      ["a dotted key", { "a.b": 1 }, /key "a\.b" contains "\."/],
      ["a $ key, at any depth", { o: { list: [{ $ref: "x" }] } }, /key "\$ref" in "o\.list\.0" starts with "\$"/],
      ["a nested array", { m: [1, [2]] }, /nested array at "m\.1"/],
      ["NaN", { n: Number.NaN }, /NaN at "n"/],
      ["-Infinity", { o: { n: Number.NEGATIVE_INFINITY } }, /-Infinity at "o\.n"/],
      ["a string with NUL", { s: "a\0b" }, /NUL character at "s"/],
      ["a key with NUL", { "k\0": 1 }, /contains a NUL character/],
    ])("%s in a document", async (_what, fields, message) => {
      await expect(c.insertOne({ _id: "x", ...fields })).rejects.toThrow(message);
      expect(await c.countDocuments({})).toBe(0);
    });

    it("a non-string _id", async () => {
      await expect(c.insertOne({ _id: 1 } as unknown as Loose)).rejects.toThrow(/_id must be a string/);
    });

    it("the same values arriving through updates and filters", async () => {
      await c.insertOne({ _id: "u", n: 1, list: [1] });
      await expect(c.updateOne({ _id: "u" }, { $set: { o: { "a.b": 1 } } })).rejects.toThrow(/contains "\."/);
      await expect(c.updateOne({ _id: "u" }, { $inc: { n: Number.POSITIVE_INFINITY } })).rejects.toThrow(/finite/);
      await expect(c.updateOne({ _id: "u" }, { $push: { list: { $each: [[1]] } } })).rejects.toThrow(/nested array/);
      await expect(c.updateOne({ _id: "u" }, { $set: { s: "\0" } })).rejects.toThrow(/NUL/);
      await expect(c.find({ n: Number.NaN })).rejects.toThrow(/NaN/);
      await expect(c.find({ n: { $in: [Number.NaN] } })).rejects.toThrow(/NaN/);
      expect(await c.findOne({ _id: "u" })).toEqual({ _id: "u", n: 1, list: [1] });
      await c.deleteOne({ _id: "u" });
    });

    it.each<[string, Filter]>([
      ["$where", { $where: "true" }],
      ["$expr", { $expr: { $eq: [1, 1] } }],
      ["$jsonSchema", { $jsonSchema: {} }],
      ["$comment", { $comment: "x" }],
      ["$lookup as a field operator", { a: { $lookup: { from: "x" } } }],
      ["$text", { $text: { $search: "x" } }],
      ["an operator inside $or", { $or: [{ a: { $near: [0, 0] } }] }],
      ["an undefined value", { a: undefined }],
    ])("query operator: %s", async (_what, filter) => {
      await expect(c.find(filter)).rejects.toThrow(/not portable/);
      await expect(c.countDocuments(filter)).rejects.toThrow(/not portable/);
    });

    it.each<[string, unknown]>([
      ["$lookup", { $lookup: { from: "x" } }],
      ["$setWindowFields", { $setWindowFields: { a: 1 } }],
      ["a positional path", { $set: { "list.$": 1 } }],
      ["an all-positional path", { $inc: { "list.$[].n": 1 } }],
      ["$push with $sort", { $push: { list: { $each: [1], $sort: 1 } } }],
      ["$push with $position", { $push: { list: { $each: [1], $position: 0 } } }],
      ["an empty update", {}],
      ["a replacement document", { a: 1 }],
    ])("update: %s", async (_what, update) => {
      await expect(c.updateOne({}, update as Update)).rejects.toThrow(/not portable/);
    });

    it("sort and projection values other than 1/-1 and 0/1", async () => {
      await expect(c.find({}, { sort: { a: 2 as 1 } })).rejects.toThrow(/not portable/);
      await expect(c.find({}, { projection: { a: true as unknown as 1 } })).rejects.toThrow(/not portable/);
    });
  });

  describe("refuses what MongoDB refuses and mingo would let through", () => {
    const c = createMemoryStore().collection<Loose>("mongo-rules");

    it("$inc on a non-number and $push onto a non-array", async () => {
      await c.insertOne({ _id: "a", s: "text", n: 1 });
      await expect(c.updateOne({ _id: "a" }, { $inc: { s: 1 } })).rejects.toThrow(/non-numeric/);
      await expect(c.updateOne({ _id: "a" }, { $push: { n: 2 } })).rejects.toThrow(/non-array/);
      expect(await c.findOne({ _id: "a" })).toEqual({ _id: "a", s: "text", n: 1 });
    });

    it("two operators on the same path, or on a path and its parent", async () => {
      await expect(c.updateOne({ _id: "a" }, { $set: { n: 1 }, $inc: { n: 1 } })).rejects.toThrow(/conflict/);
      await expect(
        c.updateOne({ _id: "a" }, { $set: { o: {} }, $setOnInsert: { "o.p": 1 } }, { upsert: true }),
      ).rejects.toThrow(/conflict/);
    });

    it("mixing inclusion and exclusion in a projection", async () => {
      await expect(c.find({}, { projection: { s: 1, n: 0 } })).rejects.toThrow(/mix inclusion and exclusion/);
    });
  });
});

describe("afterWrites", () => {
  it("awaits the hook once after every write, failed ones too, and never after a read", async () => {
    let after = 0;
    let refuse = false;
    const store = afterWrites(createMemoryStore(), async () => {
      after++;
      if (refuse) throw new Error("bus down");
    });
    const c = store.collection<Loose>("w");
    expect(c.name).toBe("w");
    await c.insertOne({ _id: "a", n: 1 });
    await c.insertMany([{ _id: "b" }, { _id: "c" }]);
    await c.updateOne({ _id: "a" }, { $set: { n: 2 } });
    await c.updateMany({}, { $set: { m: 1 } });
    await c.findOneAndUpdate({ _id: "a" }, { $set: { n: 3 } });
    await c.replaceOne({ _id: "b" }, { _id: "b", n: 9 });
    await c.deleteOne({ _id: "c" });
    await c.deleteMany({ _id: "zz" });
    expect(after).toBe(8);
    await c.findOne({ _id: "a" });
    await c.find({});
    await c.countDocuments({});
    expect(after).toBe(8);
    // A write that fails still calls the hook (it may have changed something), with its own error.
    await expect(c.insertOne({ _id: "a" })).rejects.toBeInstanceOf(DuplicateKeyError);
    expect(after).toBe(9);
    // A hook that fails fails the write, which is done all the same.
    refuse = true;
    await expect(c.insertOne({ _id: "d" })).rejects.toThrow("bus down");
    expect(await c.findOne({ _id: "d" })).toEqual({ _id: "d" });
  });
});
