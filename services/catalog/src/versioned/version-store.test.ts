import { createMemoryStore } from "@kiln/kit/store/memory";
import { describe, expect, it } from "vitest";
import { insertNextVersion } from "./version-store.js";

interface V {
  _id: string;
  parentId: string;
  version: number;
}

async function versions() {
  const store = createMemoryStore();
  await store.ensureIndexes("v", [{ keys: { parentId: 1, version: 1 }, unique: true }]);
  const c = store.collection<V>("v");
  const next = (id: string) =>
    insertNextVersion(c, { parentId: "p" }, (version) => ({ _id: id, parentId: "p", version }));
  return { c, next };
}

describe("insertNextVersion", () => {
  it("numbers on from the last version it numbered, and from the versions when that one is gone", async () => {
    const { c, next } = await versions();
    expect((await next("a")).version).toBe(1);
    expect((await next("b")).version).toBe(2);
    // Removed (an undone import): the next number follows what is there, no gap.
    await c.deleteOne({ _id: "b" });
    expect((await next("c")).version).toBe(2);
  });

  it("takes the next free number after versions written past it (another replica, an import)", async () => {
    const { c, next } = await versions();
    expect((await next("a")).version).toBe(1);
    await c.insertOne({ _id: "x", parentId: "p", version: 2 });
    await c.insertOne({ _id: "y", parentId: "p", version: 3 });
    expect((await next("b")).version).toBe(4);
    expect((await next("c")).version).toBe(5);
  });
});
