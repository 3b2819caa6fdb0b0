/**
 * The embedded mode's data directory (`KILN_DATA_DIR`, default `.kiln/`): one SQLite database with
 * a scope per service, the platform's own secrets inside it (so a backup carries them), a format
 * version, and a lock so that two processes never serve the same directory. `:memory:` keeps the
 * throwaway in-memory stores.
 *
 * Format 1 kept the same documents in an LMDB database (`store.mdb`); a directory of format 1 is
 * carried over key for key on its first open by this Kiln (the LMDB file is then left beside it as
 * `store.mdb.format-1`), and `kiln restore` takes a backup of either format.
 */
import { randomBytes } from "node:crypto";
import { chmod, copyFile, mkdir, open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { newSecretKey, type SecretKeys } from "@kiln/kit/secret-box";
import type { Store } from "@kiln/kit/store";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { createSqliteStore, type SqliteStore, type StoreSync } from "@kiln/kit/store/sqlite";
import { exportPKCS8, generateKeyPair } from "jose";
import { dataDirSecretKeys } from "./secret-key-file.js";

export const IN_MEMORY = ":memory:";
/** The layout this Kiln writes and reads; a directory written by a newer Kiln is refused. */
export const DATA_FORMAT = 2;
const FORMAT_FILE = "kiln-data.json";
const STORE_FILE = "store.db";
/** Format 1's LMDB database, carried over on the first open. */
const LMDB_FILE = "store.mdb";
const LOCK_FILE = "kiln.pid";
const SQLITE_HEADER = "SQLite format 3\u0000";

export interface DataDirOptions {
  /** When an acknowledged write is on disk (the store's `sync`; default "interval"). */
  sync?: StoreSync;
  /** KILN_SECRET_KEY (and its previous keys) when set; otherwise the directory's own `secret.key`. */
  secretKeys?: SecretKeys;
}

export interface EmbeddedStores {
  identity: Store;
  catalog: Store;
  execution: Store;
  evaluation: Store;
}

/** What the embedded platform keeps between starts: stores and the secrets that sign its tokens. */
export interface EmbeddedData {
  /** The absolute directory, or ":memory:". */
  location: string;
  durable: boolean;
  stores: EmbeddedStores;
  /** PKCS#8 PEM of the built-in issuer's ES256 key: tokens issued before a restart stay valid. */
  signingKeyPem: string;
  /** The secret that signs internal service tokens. */
  internalSecret: string;
  /** The keys that seal secrets at rest (webhook signing secrets); in memory, made for this process. */
  secretKeys: SecretKeys;
  close(): Promise<void>;
}

export class DataDirError extends Error {
  override name = "DataDirError";
}

export async function openEmbeddedData(dir: string, options: DataDirOptions = {}): Promise<EmbeddedData> {
  if (dir === IN_MEMORY) {
    const stores = memoryStores();
    return {
      location: IN_MEMORY,
      durable: false,
      stores,
      signingKeyPem: await newSigningKey(),
      internalSecret: randomBytes(32).toString("base64url"),
      secretKeys: options.secretKeys ?? { current: newSecretKey(), previous: [] },
      close: async () => {
        await Promise.all(Object.values(stores).map((s) => s.close()));
      },
    };
  }
  const location = resolve(dir);
  await mkdir(location, { recursive: true, mode: 0o700 });
  const format = await checkFormat(location);
  const releaseLock = await lock(location);
  let store: SqliteStore | undefined;
  try {
    if (format < DATA_FORMAT) await upgrade(location);
    store = createSqliteStore({ path: join(location, STORE_FILE), sync: options.sync });
    const secrets = await platformSecrets(store.scope("platform"));
    const secretKeys = await dataDirSecretKeys(location, options.secretKeys);
    const opened = store;
    return {
      location,
      durable: true,
      stores: {
        identity: store.scope("identity"),
        catalog: store.scope("catalog"),
        execution: store.scope("execution"),
        evaluation: store.scope("evaluation"),
      },
      ...secrets,
      secretKeys,
      async close() {
        await opened.close();
        await releaseLock();
      },
    };
  } catch (e) {
    await store?.close();
    await releaseLock();
    throw e;
  }
}

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

/** Carries a format-1 directory's LMDB database over into the SQLite store, then marks the directory format 2. */
async function upgrade(location: string): Promise<void> {
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
async function importLmdb(lmdbFile: string, storeFile: string): Promise<void> {
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

/** The store file and its log, so that a replaced database never meets another's log. */
async function removeStore(location: string): Promise<void> {
  for (const suffix of ["", "-wal", "-shm"]) await rm(join(location, STORE_FILE + suffix), { force: true });
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

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

function memoryStores(): EmbeddedStores {
  return {
    identity: createMemoryStore(),
    catalog: createMemoryStore(),
    execution: createMemoryStore(),
    evaluation: createMemoryStore(),
  };
}

async function newSigningKey(): Promise<string> {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  return exportPKCS8(privateKey);
}

interface SecretsDoc {
  _id: "platform";
  signingKeyPem: string;
  internalSecret: string;
  createdAt: Date;
}

/** Made on the first start and kept in the database (never logged, never served). */
async function platformSecrets(store: Store): Promise<{ signingKeyPem: string; internalSecret: string }> {
  const secrets = store.collection<SecretsDoc>("secrets");
  const found = await secrets.findOne({ _id: "platform" });
  if (found) return found;
  const made = {
    signingKeyPem: await newSigningKey(),
    internalSecret: randomBytes(32).toString("base64url"),
    createdAt: new Date(),
  };
  await secrets.updateOne({ _id: "platform" }, { $setOnInsert: made }, { upsert: true });
  const kept = await secrets.findOne({ _id: "platform" });
  if (!kept) throw new DataDirError("the platform secrets could not be stored");
  return kept;
}

async function writeFormat(location: string): Promise<void> {
  await writeFile(
    join(location, FORMAT_FILE),
    `${JSON.stringify({ format: DATA_FORMAT, createdAt: new Date().toISOString() })}\n`,
  );
}

/**
 * The directory's data format; writes the format file in a new directory, refuses a directory of a
 * newer or unknown format.
 */
async function checkFormat(location: string, options: { mustExist?: boolean } = {}): Promise<number> {
  const file = join(location, FORMAT_FILE);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    if (options.mustExist) throw new DataDirError(`${location} is not a Kiln data directory (no ${FORMAT_FILE})`);
    await writeFormat(location);
    return DATA_FORMAT;
  }
  let format: unknown;
  try {
    format = (JSON.parse(text) as { format?: unknown }).format;
  } catch {
    format = undefined;
  }
  if (typeof format !== "number" || !Number.isInteger(format) || format < 1) {
    throw new DataDirError(`${file} is not a Kiln data format file; refusing to open ${location}`);
  }
  if (format > DATA_FORMAT) {
    throw new DataDirError(
      `${location} was written by a newer Kiln (data format ${format}; this Kiln reads up to ${DATA_FORMAT}). ` +
        "Upgrade Kiln, or set KILN_DATA_DIR to another directory.",
    );
  }
  return format;
}

/** One process per directory: a pid file, taken over when the process that wrote it is gone. */
async function lock(location: string): Promise<() => Promise<void>> {
  const file = join(location, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, "wx", 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(file, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const pid = Number.parseInt(await readFile(file, "utf8").catch(() => ""), 10);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new DataDirError(`${location} is in use by another Kiln process (pid ${pid})`);
      }
      await rm(file, { force: true });
    }
  }
  throw new DataDirError(`could not lock ${location}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
