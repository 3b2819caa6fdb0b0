/** Backups of the data directory's database, and restoring one (of either format) in its place. */
import { chmod, copyFile, mkdir, open, rename, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createSqliteStore } from "@kiln/kit/store/sqlite";
import {
  checkFormat,
  DATA_FORMAT,
  DataDirError,
  lock,
  removeStore,
  STORE_FILE,
  writeFormat,
} from "./data-dir-files.js";
import { importLmdb } from "./data-dir-import.js";

const SQLITE_HEADER = "SQLite format 3\u0000";

/** Copies the data directory's database to one file, while the platform keeps serving. */
export async function backupEmbeddedData(dir: string, targetFile: string): Promise<void> {
  const location = resolve(dir);
  if ((await checkFormat(location, { mustExist: true })) < DATA_FORMAT) {
    throw new DataDirError(`${location} holds data format 1: start Kiln on it once to carry it over, then back it up`);
  }
  const store = createSqliteStore({ path: join(location, STORE_FILE), readonly: true });
  try {
    await store.backup(resolve(targetFile));
  } finally {
    await store.close();
  }
}

/** Replaces the data directory's database with a backup (of either format); refused while a platform serves it. */
export async function restoreEmbeddedData(dir: string, backupFile: string): Promise<void> {
  const location = resolve(dir);
  const source = resolve(backupFile);
  const sqlite = await isSqliteFile(source);
  // Opening the backup proves it is a Kiln database before anything is replaced.
  if (sqlite) {
    const probe = createSqliteStore({ path: source, readonly: true });
    try {
      await probe.scope("platform").collection("secrets").findOne({ _id: "platform" });
    } finally {
      await probe.close();
    }
  }
  await mkdir(location, { recursive: true, mode: 0o700 });
  await checkFormat(location);
  const releaseLock = await lock(location);
  try {
    // Made whole beside the current store, which is replaced only once the backup has been read.
    const incoming = join(location, `${STORE_FILE}.incoming`);
    await rm(incoming, { force: true });
    if (sqlite) await copyFile(source, incoming);
    else await importLmdb(source, incoming);
    await chmod(incoming, 0o600);
    await removeStore(location);
    await rename(incoming, join(location, STORE_FILE));
    await writeFormat(location);
  } finally {
    await releaseLock();
  }
}

async function isSqliteFile(file: string): Promise<boolean> {
  const handle = await open(file, "r");
  try {
    const header = Buffer.alloc(SQLITE_HEADER.length);
    await handle.read(header, 0, header.length, 0);
    return header.toString("latin1") === SQLITE_HEADER;
  } finally {
    await handle.close();
  }
}
