import { describe, expect, it } from "vitest";
import { createMemoryStore } from "./memory-store.js";
import { aroundCollection, createGroupInserter, isDuplicateKeyError, StoreUnavailableError } from "./store.js";

describe("the group inserter with the store away", () => {
  it("fails a batch the store could not take at once, without retrying each document alone", async () => {
    const calls: string[] = [];
    const coll = aroundCollection(createMemoryStore().collection<{ _id: string }>("runs"), async (method) => {
      calls.push(method);
      throw new StoreUnavailableError(new Error("connection refused"));
    });
    const inserter = createGroupInserter(coll);
    // Made in one turn of the event loop, the four go together as one batch.
    const results = await Promise.allSettled(["a", "b", "c", "d"].map((id) => inserter.insert({ _id: id })));
    for (const r of results) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
    expect(calls).toEqual(["insertUnordered"]);
  });
});

describe("the group inserter with a store that answers at once", () => {
  it("stores the inserts made in one turn of the event loop in one batch, and one made alone alone", async () => {
    const calls: string[] = [];
    const coll = aroundCollection(createMemoryStore().collection<{ _id: string }>("runs"), async (method, run) => {
      calls.push(method);
      return run();
    });
    const inserter = createGroupInserter(coll);
    await Promise.all(["a", "b", "c"].map((id) => inserter.insert({ _id: id })));
    await inserter.insert({ _id: "d" });
    expect(calls).toEqual(["insertUnordered", "insertOne"]);
    expect((await coll.find({}, { sort: { _id: 1 } })).map((d) => d._id)).toEqual(["a", "b", "c", "d"]);
  });
});

describe("the group inserter with a document already stored", () => {
  it("refuses it with a duplicate key alone and in a batch alike, and stores the others of the batch", async () => {
    const coll = createMemoryStore().collection<{ _id: string; n: number }>("runs");
    await coll.insertOne({ _id: "taken", n: 0 });
    const inserter = createGroupInserter(coll);
    const alone = await Promise.allSettled([inserter.insert({ _id: "taken", n: 1 })]);
    // Made in one turn of the event loop, the four go together as one batch, "taken" among them.
    const batched = await Promise.allSettled(["x", "y", "taken", "z"].map((id, n) => inserter.insert({ _id: id, n })));
    expect(alone[0]?.status).toBe("rejected");
    expect(isDuplicateKeyError((alone[0] as PromiseRejectedResult).reason)).toBe(true);
    expect(batched.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(isDuplicateKeyError((batched[2] as PromiseRejectedResult).reason)).toBe(true);
    expect((await coll.find({}, { sort: { _id: 1 } })).map((d) => [d._id, d.n])).toEqual([
      ["taken", 0],
      ["x", 0],
      ["y", 1],
      ["z", 3],
    ]);
  });
});
