/**
 * Format 1 of the data directory kept its documents in an LMDB database (`store.mdb`): this carries
 * one over, key for key, into the SQLite store, on the first open or from a backup of that format.
 */
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { createSqliteStore } from "@kiln/kit/store/sqlite";
import { DataDirError, exists, LMDB_FILE, removeStore, STORE_FILE, writeFormat } from "./data-dir-files.js";

/** Carries a format-1 directory's LMDB database over into the SQLite store, then marks the directory format 2. */
export async function upgrade(location: string): Promise<void> {
  const lmdbFile = join(location, LMDB_FILE);
  if (await exists(lmdbFile)) {
    await removeStore(location);
    await importLmdb(lmdbFile, join(location, STORE_FILE));
    await rename(lmdbFile, `${lmdbFile}.format-1`);
    await rm(`${lmdbFile}-lock`, { force: true });
  }
  await writeFormat(location);
}

/** Copies every entry of an LMDB database (format 1) into a new SQLite store file. */
export async function importLmdb(lmdbFile: string, storeFile: string): Promise<void> {
  // Loaded only here: lmdb's native module takes a thread and 17 MB of buffers as it loads.
  const { readLmdbEntries } = await import("@kiln/kit/store/lmdb-import");
  let source: ReturnType<typeof readLmdbEntries>;
  try {
    source = readLmdbEntries(lmdbFile);
  } catch (e) {
    throw new DataDirError(`${lmdbFile} is neither a Kiln SQLite database nor a Kiln LMDB database: ${String(e)}`);
  }
  const store = createSqliteStore({ path: storeFile, sync: "commit" });
  let imported = false;
  try {
    store.importEntries(source.entries);
    // The secrets every Kiln database holds: what was imported is a Kiln database.
    if (!(await store.scope("platform").collection("secrets").findOne({ _id: "platform" }))) {
      throw new DataDirError(`${lmdbFile} holds no Kiln platform data`);
    }
    imported = true;
  } finally {
    await store.close();
    await source.close();
    await rm(`${lmdbFile}-lock`, { force: true });
    if (!imported) await rm(storeFile, { force: true });
  }
}
