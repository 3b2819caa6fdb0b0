import { describe, expect, it } from "vitest";
import { createMemoryStore } from "./memory-store.js";
import { aroundCollection, createGroupInserter, StoreUnavailableError } from "./store.js";

describe("the group inserter with the store away", () => {
  it("fails a batch the store could not take at once, without retrying each document alone", async () => {
    const calls: string[] = [];
    const coll = aroundCollection(createMemoryStore().collection<{ _id: string }>("runs"), async (method) => {
      calls.push(method);
      throw new StoreUnavailableError(new Error("connection refused"));
    });
    const inserter = createGroupInserter(coll);
    // The first goes alone; the three queued behind it go together as one batch.
    const results = await Promise.allSettled(["a", "b", "c", "d"].map((id) => inserter.insert({ _id: id })));
    for (const r of results) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
    expect(calls).toEqual(["insertOne", "insertMany"]);
  });
});
