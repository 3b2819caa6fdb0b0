import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeStoreContract } from "@kiln/testing/store-contract";
import { open } from "lmdb";
import { BSON } from "mongodb";
import { afterAll, describe, expect, it } from "vitest";
import { keyPart } from "./index-keys.js";
import { readLmdbEntries } from "./lmdb-import.js";
import { createSqliteStore } from "./sqlite-store.js";
import type { Doc } from "./store.js";

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "kiln-sqlite-"));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describeStoreContract("sqlite", async () => {
  const store = createSqliteStore({ path: join(await tempDir(), "store.db") });
  return { store, cleanup: () => store.close() };
});

interface Run extends Doc {
  organizationId: string;
  n: number;
}

describe("createSqliteStore", () => {
  it("keeps documents and indexes across a close and a reopen", async () => {
    const path = join(await tempDir(), "store.db");
    const first = createSqliteStore({ path });
    await first.ensureIndexes("runs", [{ keys: { organizationId: 1, n: 1 }, unique: true }]);
    await first.collection<Run>("runs").insertMany([
      { _id: "r1", organizationId: "o1", n: 1 },
      { _id: "r2", organizationId: "o1", n: 2 },
    ]);
    await first.close();

    const second = createSqliteStore({ path });
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
    const store = createSqliteStore({ path: join(await tempDir(), "store.db") });
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
    const store = createSqliteStore({ path: join(await tempDir(), "store.db") });
    await store.scope("a").collection<Run>("runs").insertOne({ _id: "r1", organizationId: "o1", n: 1 });
    expect(await store.scope("b").collection<Run>("runs").findOne({ _id: "r1" })).toBeNull();
    expect(await store.scope("a").collection<Run>("runs").countDocuments({})).toBe(1);
    await store.close();
  });

  it("makes a hot backup that opens as a store with the same documents", async () => {
    const store = createSqliteStore({ path: join(await tempDir(), "store.db") });
    await store.collection<Run>("runs").insertOne({ _id: "r1", organizationId: "o1", n: 1 });
    const backupDir = await tempDir();
    const copy = join(backupDir, "backup.db");
    await store.backup(copy);
    // Written after the copy: not in it.
    await store.collection<Run>("runs").insertOne({ _id: "r2", organizationId: "o1", n: 2 });
    await store.close();
    // One file: the copy's log is folded into it; readable by its owner only.
    expect(await readdir(backupDir)).toEqual(["backup.db"]);
    expect((await stat(copy)).mode & 0o777).toBe(0o600);
    const restored = createSqliteStore({ path: copy });
    expect(await restored.collection<Run>("runs").findOne({ _id: "r1" })).toEqual({
      _id: "r1",
      organizationId: "o1",
      n: 1,
    });
    expect(await restored.collection<Run>("runs").countDocuments({})).toBe(1);
    await restored.close();
  });

  it("opens a database read-only: reads it, refuses a write and leaves the file in its journal mode", async () => {
    const store = createSqliteStore({ path: join(await tempDir(), "store.db") });
    await store.collection<Run>("runs").insertOne({ _id: "r1", organizationId: "o1", n: 1 });
    const copy = join(await tempDir(), "backup.db");
    await store.backup(copy);
    await store.close();
    // Byte 18 of a SQLite file: 1 in rollback-journal mode, 2 in write-ahead-log mode.
    const mode = async () => (await readFile(copy))[18];
    expect(await mode()).toBe(1);
    const reader = createSqliteStore({ path: copy, readonly: true });
    expect(await reader.collection<Run>("runs").findOne({ _id: "r1" })).toMatchObject({ n: 1 });
    await expect(reader.collection<Run>("runs").insertOne({ _id: "r2", organizationId: "o1", n: 2 })).rejects.toThrow(
      /readonly/,
    );
    await reader.close();
    expect(await mode()).toBe(1);
  });

  it("refuses a file that is not an LMDB database instead of mapping it", async () => {
    const junk = join(await tempDir(), "junk.mdb");
    await writeFile(junk, Buffer.alloc(3_000, 7));
    expect(() => readLmdbEntries(junk)).toThrow(/is not an LMDB database/);
  });

  it("flushes each commit in commit mode and keeps what it acknowledged across a reopen", async () => {
    const path = join(await tempDir(), "store.db");
    const first = createSqliteStore({ path, sync: "commit" });
    await first.collection<Run>("runs").insertOne({ _id: "r1", organizationId: "o1", n: 1 });
    await first.close();
    const second = createSqliteStore({ path });
    expect(await second.collection<Run>("runs").findOne({ _id: "r1" })).toMatchObject({ n: 1 });
    await second.close();
  });

  it("keeps every document, index entry and index of a database of the LMDB store it imports", async () => {
    // The layout the LMDB store wrote until data format 2: documents as BSON under
    // `<collection>\0<_id>`, index entries under `<collection>\0<index>\0<field key>\0<_id>`, and
    // each collection's index list as JSON under `indexes\0<collection>`.
    const lmdbPath = join(await tempDir(), "store.mdb");
    const env = open({ path: lmdbPath, maxDbs: 8 });
    const docs = env.openDB<Buffer, Buffer>({ name: "docs", encoding: "binary", keyEncoding: "binary" });
    const index = env.openDB<string, Buffer>({ name: "index", encoding: "string", keyEncoding: "binary" });
    const meta = env.openDB<unknown, string>({ name: "meta", encoding: "json" });
    const indexName = "organizationId_1_n_1";
    await env.transaction(() => {
      for (const run of [
        { _id: "r1", organizationId: "o1", n: 1 },
        { _id: "r2", organizationId: "o2", n: 1 },
      ]) {
        docs.put(Buffer.from(`x/runs\0${run._id}`), Buffer.from(BSON.serialize(run)));
        const parts = [keyPart(run.organizationId), keyPart(run.n)].join("\0");
        index.put(Buffer.from(`x/runs\0${indexName}\0${parts}\0${run._id}`), "");
      }
      meta.put("indexes\0x/runs", [{ name: indexName, keys: { organizationId: 1, n: 1 }, unique: true }]);
    });
    await env.close();

    const store = createSqliteStore({ path: join(await tempDir(), "store.db") });
    const source = readLmdbEntries(lmdbPath);
    try {
      store.importEntries(source.entries);
    } finally {
      await source.close();
    }
    const runs = store.scope("x").collection<Run>("runs");
    expect(await runs.find({}, { sort: { _id: 1 } })).toEqual([
      { _id: "r1", organizationId: "o1", n: 1 },
      { _id: "r2", organizationId: "o2", n: 1 },
    ]);
    expect(await runs.find({ organizationId: "o2" })).toEqual([{ _id: "r2", organizationId: "o2", n: 1 }]);
    // The unique index came over with its entries.
    await expect(runs.insertOne({ _id: "r3", organizationId: "o1", n: 1 })).rejects.toMatchObject({ code: 11000 });
    await store.close();
  });
});
