import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLmdbStore } from "./lmdb-store.js";
import type { Doc } from "./store.js";
import { describeStoreContract } from "./store-contract.js";

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "kiln-lmdb-"));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describeStoreContract("lmdb", async () => {
  const store = createLmdbStore({ path: join(await tempDir(), "store.mdb") });
  return { store, cleanup: () => store.close() };
});

interface Run extends Doc {
  organizationId: string;
  n: number;
}

describe("createLmdbStore", () => {
  it("keeps documents and indexes across a close and a reopen", async () => {
    const path = join(await tempDir(), "store.mdb");
    const first = createLmdbStore({ path });
    await first.ensureIndexes("runs", [{ keys: { organizationId: 1, n: 1 }, unique: true }]);
    await first.collection<Run>("runs").insertMany([
      { _id: "r1", organizationId: "o1", n: 1 },
      { _id: "r2", organizationId: "o1", n: 2 },
    ]);
    await first.close();

    const second = createLmdbStore({ path });
    const runs = second.collection<Run>("runs");
    expect(await runs.find({ organizationId: "o1" }, { sort: { _id: -1 } })).toEqual([
      { _id: "r2", organizationId: "o1", n: 2 },
      { _id: "r1", organizationId: "o1", n: 1 },
    ]);
    // The unique index came back with its entries.
    await expect(runs.insertOne({ _id: "r3", organizationId: "o1", n: 2 })).rejects.toMatchObject({ code: 11000 });
    await second.close();
  });

  it("pages newest first through an index without reading other organizations' documents", async () => {
    const store = createLmdbStore({ path: join(await tempDir(), "store.mdb") });
    await store.ensureIndexes("runs", [{ keys: { organizationId: 1, _id: -1 } }]);
    const runs = store.collection<Run>("runs");
    const docs: Run[] = [];
    for (let i = 0; i < 120; i++)
      docs.push({ _id: `r${String(i).padStart(4, "0")}`, organizationId: `o${i % 3}`, n: i });
    await runs.insertMany(docs);
    const pageOf = (cursor?: string) =>
      runs.find(cursor ? { $and: [{ organizationId: "o1" }, { _id: { $lt: cursor } }] } : { organizationId: "o1" }, {
        sort: { _id: -1 },
        limit: 7,
      });
    const seen: string[] = [];
    let page = await pageOf();
    while (page.length > 0) {
      seen.push(...page.map((d) => d._id));
      page = await pageOf(page.at(-1)?._id);
    }
    const expected = docs
      .filter((d) => d.organizationId === "o1")
      .map((d) => d._id)
      .reverse();
    expect(seen).toEqual(expected);
    await store.close();
  });

  it("keeps scoped views apart in one database", async () => {
    const store = createLmdbStore({ path: join(await tempDir(), "store.mdb") });
    await store.scope("a").collection<Run>("runs").insertOne({ _id: "r1", organizationId: "o1", n: 1 });
    expect(await store.scope("b").collection<Run>("runs").findOne({ _id: "r1" })).toBeNull();
    expect(await store.scope("a").collection<Run>("runs").countDocuments({})).toBe(1);
    await store.close();
  });

  it("makes a hot backup that opens as a store with the same documents", async () => {
    const store = createLmdbStore({ path: join(await tempDir(), "store.mdb") });
    await store.collection<Run>("runs").insertOne({ _id: "r1", organizationId: "o1", n: 1 });
    const copy = join(await tempDir(), "backup.mdb");
    await store.backup(copy);
    await store.close();
    const restored = createLmdbStore({ path: copy });
    expect(await restored.collection<Run>("runs").findOne({ _id: "r1" })).toEqual({
      _id: "r1",
      organizationId: "o1",
      n: 1,
    });
    await restored.close();
  });
});
