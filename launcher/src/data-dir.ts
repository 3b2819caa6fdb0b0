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
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { newSecretKey, type SecretKeys } from "@kiln/kit/secret-box";
import type { Store } from "@kiln/kit/store";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { createSqliteStore, type SqliteStore, type StoreSync } from "@kiln/kit/store/sqlite";
import { exportPKCS8, generateKeyPair } from "jose";
import { checkFormat, DATA_FORMAT, DataDirError, lock, STORE_FILE } from "./data-dir-files.js";
import { upgrade } from "./data-dir-import.js";
import { dataDirSecretKeys } from "./secret-key-file.js";

export { backupEmbeddedData, restoreEmbeddedData } from "./data-dir-backup.js";
export { DATA_FORMAT, DataDirError } from "./data-dir-files.js";

export const IN_MEMORY = ":memory:";

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
