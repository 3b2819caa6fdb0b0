/**
 * The embedded mode's data directory (`KILN_DATA_DIR`, default `.kiln/`): one LMDB database with a
 * scope per service, the platform's own secrets inside it (so a backup carries them), a format
 * version, and a lock so that two processes never serve the same directory. `:memory:` keeps the
 * throwaway in-memory stores.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Store } from "@kiln/kit/store";
import { createLmdbStore, type LmdbStore } from "@kiln/kit/store/lmdb";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { exportPKCS8, generateKeyPair } from "jose";

export const IN_MEMORY = ":memory:";
/** The layout this Kiln writes and reads; a directory written by a newer Kiln is refused. */
export const DATA_FORMAT = 1;
const FORMAT_FILE = "kiln-data.json";
const STORE_FILE = "store.mdb";
const LOCK_FILE = "kiln.pid";

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
  close(): Promise<void>;
}

export class DataDirError extends Error {
  override name = "DataDirError";
}

export async function openEmbeddedData(dir: string): Promise<EmbeddedData> {
  if (dir === IN_MEMORY) {
    const stores = memoryStores();
    return {
      location: IN_MEMORY,
      durable: false,
      stores,
      signingKeyPem: await newSigningKey(),
      internalSecret: randomBytes(32).toString("base64url"),
      close: async () => {
        await Promise.all(Object.values(stores).map((s) => s.close()));
      },
    };
  }
  const location = resolve(dir);
  await mkdir(location, { recursive: true, mode: 0o700 });
  await checkFormat(location);
  const releaseLock = await lock(location);
  let store: LmdbStore | undefined;
  try {
    store = createLmdbStore({ path: join(location, STORE_FILE) });
    const secrets = await platformSecrets(store.scope("platform"));
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
  await checkFormat(location, { mustExist: true });
  const store = createLmdbStore({ path: join(location, STORE_FILE) });
  try {
    await store.backup(resolve(targetFile));
  } finally {
    await store.close();
  }
}

/** Replaces the data directory's database with a backup; refused while a platform serves it. */
export async function restoreEmbeddedData(dir: string, backupFile: string): Promise<void> {
  const location = resolve(dir);
  // Opening the backup proves it is a Kiln database before anything is replaced.
  const probe = createLmdbStore({ path: resolve(backupFile) });
  try {
    await probe.scope("platform").collection("secrets").findOne({ _id: "platform" });
  } finally {
    await probe.close();
    await rm(`${resolve(backupFile)}-lock`, { force: true });
  }
  await mkdir(location, { recursive: true, mode: 0o700 });
  await checkFormat(location);
  const releaseLock = await lock(location);
  try {
    await writeFile(join(location, STORE_FILE), await readFile(resolve(backupFile)), { mode: 0o600 });
    await rm(join(location, `${STORE_FILE}-lock`), { force: true });
  } finally {
    await releaseLock();
  }
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

/** Writes the format file in a new directory; refuses a directory of a newer or unknown format. */
async function checkFormat(location: string, options: { mustExist?: boolean } = {}): Promise<void> {
  const file = join(location, FORMAT_FILE);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    if (options.mustExist) throw new DataDirError(`${location} is not a Kiln data directory (no ${FORMAT_FILE})`);
    await writeFile(file, `${JSON.stringify({ format: DATA_FORMAT, createdAt: new Date().toISOString() })}\n`);
    return;
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
