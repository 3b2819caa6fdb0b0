/**
 * A durable embedded `Store` on SQLite (better-sqlite3: ACID, in-process, write-ahead log, readable
 * by a second process while the server writes), with the document semantics of the shared engine
 * (document-engine.ts), so it passes the same contract suite as MongoDB.
 *
 * Documents live on disk, not in the heap (SQLite's page cache is bounded, and nothing is
 * memory-mapped): one table holds every collection's documents as BSON under the binary key
 * `<collection>\0<_id>`, another every index entry under `<collection>\0<index>\0<field key>…\0<_id>`,
 * both ordered by key (memcmp, as LMDB ordered them: a data directory of the LMDB store copies over
 * key for key, see lmdb-import.ts). A query with equalities on an index's leading fields reads that
 * index's range, a query on `_id` bounds reads the documents' range, and when either already comes
 * in the requested `_id` order the engine stops at the page's end. Each write runs in one SQLite
 * transaction (atomic: a document and its index entries together or not at all).
 *
 * Durability (`sync`): "interval" (the default) acknowledges a write once it is in the write-ahead
 * log — in the OS, so a crash of the process loses nothing — and flushes the log to disk within
 * `syncIntervalMs` (100 ms): MongoDB's default write concern and journal interval. A crash of the
 * machine may lose those last milliseconds, never the database's integrity (the log's frames are
 * checksummed). "commit" flushes the log on every commit before acknowledging it.
 */
import { chmod, rm } from "node:fs/promises";
import Database from "better-sqlite3";
import { createDocumentCollection } from "./document-engine.js";
import type { Atomic, Table } from "./document-table.js";
import { ensureIndex } from "./index-keys.js";
import { EMPTY, keySpace, logSyncer, type MetaSpace, prepareDatabase, type StoredIndex } from "./sqlite-keyspace.js";
import { createTable } from "./sqlite-table.js";
import {
  type Collection,
  type Doc,
  type IndexSpec,
  mapCollectionErrors,
  type Store,
  StoreUnavailableError,
} from "./store.js";

export type StoreSync = "interval" | "commit";

export interface SqliteStoreOptions {
  /** The database file (e.g. `.kiln/store.db`), in a directory that exists; created when missing. */
  path: string;
  /** Opens an existing database without writing to it (a backup's source, a file to check). */
  readonly?: boolean;
  /** When a write is on disk: within `syncIntervalMs` of its acknowledgement (default), or before it. */
  sync?: StoreSync;
  /** How long an acknowledged write may wait for the disk in "interval" mode (default 100 ms). */
  syncIntervalMs?: number;
  /**
   * SQLite's page cache, in KiB (default 4096). better-sqlite3 builds SQLite with 16 MB, which a
   * steady stream of runs fills within minutes; what falls out is read again from the OS's cache.
   */
  cacheKiB?: number;
}

export interface SqliteStore extends Store {
  /** A view of the same database whose collections are named `<prefix>/<name>`: one per service. */
  scope(prefix: string): Store;
  /** A consistent single-file copy of the whole database, taken while it keeps serving (`VACUUM INTO`). */
  backup(targetFile: string): Promise<void>;
  /** Every key and value of the three key spaces, for a copy (and `importEntries` on the other side). */
  importEntries(entries: Iterable<KeySpaceEntry>): void;
}

/** One row of the store's key spaces: documents, index entries, or a collection's index list. */
export type KeySpaceEntry =
  | { space: "docs"; key: Buffer; value: Buffer }
  | { space: "index"; key: Buffer }
  | { space: "meta"; key: string; value: unknown };

/** Result codes of a database that is there but cannot be used now (another writer, the disk). */
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN)/;

/** The database was closed (the process is stopping), or SQLite says it cannot be used now. */
function isSqliteUnavailable(db: Database.Database, e: unknown): boolean {
  if (!db.open) return true;
  return e instanceof Database.SqliteError && UNAVAILABLE_CODES.test(e.code);
}

export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const readonly = options.readonly === true;
  const db = new Database(options.path, { readonly, fileMustExist: readonly });
  const syncEachCommit = options.sync === "commit";
  try {
    db.pragma(`cache_size = -${options.cacheKiB ?? 4096}`);
    if (!readonly) prepareDatabase(db, syncEachCommit);
  } catch (e) {
    db.close();
    throw e;
  }
  const docs = keySpace(db, "docs", true);
  const entries = keySpace(db, "entries", false);
  const getMeta = db.prepare<[string], string>("SELECT v FROM meta WHERE k = ?").pluck();
  const putMeta = db.prepare<[string, string]>("INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)");
  const meta: MetaSpace = {
    get: (k) => {
      const found = getMeta.get(k);
      return found === undefined ? undefined : (JSON.parse(found) as StoredIndex[]);
    },
    put: (k, value) => void putMeta.run(k, JSON.stringify(value)),
  };
  const syncer =
    syncEachCommit || readonly ? undefined : logSyncer(`${options.path}-wal`, options.syncIntervalMs ?? 100);

  // What the operation wrote before it threw is kept (as LMDB and the servers keep it: insertMany
  // keeps the documents before a clash); the engine checks before it writes, so a refused
  // operation has written nothing.
  const transaction = db.transaction((operation: () => unknown): { value: unknown } | { error: unknown } => {
    try {
      return { value: operation() };
    } catch (error) {
      return { error };
    }
  });
  const atomic: Atomic = async <R>(operation: () => R): Promise<R> => {
    const outcome = transaction(operation);
    syncer?.wrote();
    if ("error" in outcome) throw outcome.error;
    return outcome.value as R;
  };

  const tables = new Map<string, Table>();
  const tableOf = (name: string): Table => {
    let table = tables.get(name);
    if (!table) {
      table = createTable(name, docs, entries, meta);
      tables.set(name, table);
    }
    return table;
  };
  const ping = db.prepare("SELECT 1").pluck();
  const vacuumInto = db.prepare<[string]>("VACUUM INTO ?");
  const view = (prefix: string): Store => ({
    collection: <T extends Doc>(name: string): Collection<T> =>
      mapCollectionErrors(createDocumentCollection<T>(tableOf(prefix + name), atomic), (e) =>
        isSqliteUnavailable(db, e) ? new StoreUnavailableError(e) : e,
      ),
    async ensureIndexes(name: string, indexes: IndexSpec[]) {
      const table = tableOf(prefix + name);
      for (const index of indexes) {
        await atomic(() => ensureIndex(table, index));
      }
    },
    async ping() {
      ping.get();
    },
    // A scoped view shares the database; only the root closes it.
    async close() {},
  });

  return {
    ...view(""),
    scope: (prefix) => view(`${prefix}/`),
    async close() {
      if (!db.open) return;
      await syncer?.close();
      db.close();
    },
    async backup(targetFile: string) {
      await rm(targetFile, { force: true });
      // One read transaction, so writers elsewhere (the serving platform) neither stop it nor
      // restart it, as they restart SQLite's page-by-page backup; the copy comes out compacted, one
      // file in rollback-journal mode (no -wal or -shm file goes with it).
      vacuumInto.run(targetFile);
      // It carries whatever the database holds (the platform's secrets among it): the owner's only.
      await chmod(targetFile, 0o600);
    },
    importEntries(rows: Iterable<KeySpaceEntry>) {
      db.transaction(() => {
        for (const row of rows) {
          if (row.space === "docs") docs.put(row.key, row.value);
          else if (row.space === "index") entries.put(row.key, EMPTY);
          else meta.put(row.key, row.value as StoredIndex[]);
        }
      })();
    },
  };
}
