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
import { createHash } from "node:crypto";
import { chmod, type FileHandle, open, rm } from "node:fs/promises";
import Database from "better-sqlite3";
import { BSON } from "bson";
import {
  type Atomic,
  createDocumentCollection,
  ensureIndex,
  equalitiesOf,
  ID_INDEX,
  type Index,
  idBoundsOf,
  keyPart,
  type Stored,
  type Table,
  tryIndexKeyOf,
} from "./document-engine.js";
import {
  type Collection,
  type Doc,
  type Filter,
  type IndexSpec,
  mapCollectionErrors,
  type Sort,
  type Store,
  StoreUnavailableError,
} from "./store.js";

type Key = Buffer;
const key = (text: string): Key => Buffer.from(text, "utf8");
const text = (k: Key): string => k.toString("utf8");
const SEP = "\u0000";
/** Above every key that continues a `prefix + SEP` (SEP is the lowest code unit). */
const AFTER = "\u0001";
/** Index keys stay short (LMDB's limit was 1978 bytes): a long field value is indexed by its digest. */
const MAX_PART_LENGTH = 200;
/** Rows read per statement while a range is walked; a scan that stops early reads little. */
const FIRST_CHUNK = 16;
const MAX_CHUNK = 512;

interface StoredIndex extends Index {
  /** Set once a document held an array in one of its fields: equality lookups may then miss it. */
  multikey?: boolean;
}

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

/** An ordered key space: the few operations the tables need of it. */
interface KeySpace {
  get(k: Key): Buffer | undefined;
  /**
   * Ascending from `start` (inclusive) to `end` (exclusive); when `reverse`, descending from `start`
   * down to `end`, both inclusive (a superset: the engine re-checks every bound).
   */
  range(range: KeyRange): Iterable<{ key: Key; value: Buffer }>;
  keys(range: KeyRange): Iterable<Key>;
  put(k: Key, value: Buffer): void;
  remove(k: Key): void;
}

interface KeyRange {
  start: Key;
  end: Key;
  reverse?: boolean;
}

interface MetaSpace {
  get(k: string): StoredIndex[] | undefined;
  put(k: string, value: StoredIndex[]): void;
}

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

const EMPTY = Buffer.alloc(0);

/** The log mode, the flush per commit or not, and the three key tables. */
function prepareDatabase(db: Database.Database, syncEachCommit: boolean): void {
  db.pragma("journal_mode = WAL");
  // In WAL mode NORMAL writes the log without a flush per commit; FULL flushes it on each commit.
  db.pragma(`synchronous = ${syncEachCommit ? "FULL" : "NORMAL"}`);
  db.exec(
    "CREATE TABLE IF NOT EXISTS docs (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;" +
      "CREATE TABLE IF NOT EXISTS entries (k BLOB PRIMARY KEY) WITHOUT ROWID;" +
      "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID;",
  );
}

/** One of the store's ordered key tables; `withValues` when its rows carry a value. */
function keySpace(db: Database.Database, table: "docs" | "entries", withValues: boolean): KeySpace {
  const value = withValues ? "v" : "x''";
  const get = db.prepare<[Key], Buffer>(`SELECT ${value} FROM ${table} WHERE k = ?`).pluck();
  const forward = db.prepare<[Key, Key, number], { key: Key; value: Buffer }>(
    `SELECT k AS key, ${value} AS value FROM ${table} WHERE k >= ? AND k < ? ORDER BY k LIMIT ?`,
  );
  const forwardAfter = db.prepare<[Key, Key, number], { key: Key; value: Buffer }>(
    `SELECT k AS key, ${value} AS value FROM ${table} WHERE k > ? AND k < ? ORDER BY k LIMIT ?`,
  );
  const backward = db.prepare<[Key, Key, number], { key: Key; value: Buffer }>(
    `SELECT k AS key, ${value} AS value FROM ${table} WHERE k <= ? AND k >= ? ORDER BY k DESC LIMIT ?`,
  );
  const backwardBefore = db.prepare<[Key, Key, number], { key: Key; value: Buffer }>(
    `SELECT k AS key, ${value} AS value FROM ${table} WHERE k < ? AND k >= ? ORDER BY k DESC LIMIT ?`,
  );
  const put = withValues
    ? db.prepare<[Key, Buffer]>(`INSERT OR REPLACE INTO ${table} (k, v) VALUES (?, ?)`)
    : db.prepare<[Key]>(`INSERT OR IGNORE INTO ${table} (k) VALUES (?)`);
  const remove = db.prepare<[Key]>(`DELETE FROM ${table} WHERE k = ?`);

  /** The range in growing chunks, each read whole: no statement stays open between two reads. */
  function* range({ start, end, reverse }: KeyRange): Iterable<{ key: Key; value: Buffer }> {
    let chunk = FIRST_CHUNK;
    let rows = (reverse ? backward : forward).all(start, end, chunk);
    for (;;) {
      yield* rows;
      if (rows.length < chunk) return;
      const last = rows.at(-1)?.key;
      if (!last) return;
      chunk = Math.min(chunk * 2, MAX_CHUNK);
      rows = (reverse ? backwardBefore : forwardAfter).all(last, end, chunk);
    }
  }
  return {
    get: (k) => get.get(k),
    range,
    *keys(r) {
      for (const row of range(r)) yield row.key;
    },
    put: withValues ? (k, v) => void put.run(k, v) : (k) => void (put as Database.Statement<[Key]>).run(k),
    remove: (k) => void remove.run(k),
  };
}

/**
 * Flushes the write-ahead log within `intervalMs` of a write, off the event loop (the thread pool's
 * fsync of the log file: Linux flushes a file's pages through any descriptor of it).
 */
function logSyncer(logFile: string, intervalMs: number) {
  let handle: FileHandle | undefined;
  let dirty = false;
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();
  const flush = async () => {
    if (!dirty) return;
    dirty = false;
    handle ??= await open(logFile, "r");
    await handle.sync();
  };
  const schedule = () => {
    timer = undefined;
    // One flush at a time; a failed one is tried again on the next write (a checkpoint flushes too).
    flushing = flushing.then(flush).catch(() => {
      dirty = true;
    });
  };
  return {
    wrote() {
      dirty = true;
      timer ??= setTimeout(schedule, intervalMs).unref();
    },
    async close() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      await flushing;
      await flush().finally(() => handle?.close());
    },
  };
}

function* allDocs(docs: KeySpace, collection: string): Iterable<Stored> {
  for (const { value } of docs.range({ start: key(collection + SEP), end: key(collection + AFTER) })) {
    yield decode(value);
  }
}

function createTable(name: string, docs: KeySpace, entries: KeySpace, meta: MetaSpace): Table {
  const docKey = (id: string) => key(name + SEP + id);
  const metaKey = `indexes${SEP}${name}`;
  const secondary: StoredIndex[] = meta.get(metaKey) ?? [];
  const all: Index[] = [ID_INDEX, ...secondary];
  const saveIndexes = () => meta.put(metaKey, secondary);
  const prefixOf = (index: Index, parts: string[]) => [name, index.name, ...parts.map(shortPart)].join(SEP) + SEP;
  /** The entry of `doc` in `index`; none when it holds an array there (the index is then marked multikey). */
  const entryOf = (index: StoredIndex, doc: Stored): string | undefined => {
    const parts = tryIndexKeyOf(index, doc);
    if (parts) return prefixOf(index, parts) + doc._id;
    if (!index.multikey) {
      index.multikey = true;
      saveIndexes();
    }
    return undefined;
  };
  const entryKeys = (doc: Stored): string[] =>
    secondary.map((index) => entryOf(index, doc)).filter((entry): entry is string => entry !== undefined);
  const get = (id: string): Stored | undefined => {
    const value = docs.get(docKey(id));
    return value ? decode(value) : undefined;
  };
  function* byIds(ids: Iterable<string>): Iterable<Stored> {
    for (const id of ids) {
      const doc = get(id);
      if (doc) yield doc;
    }
  }

  return {
    name,
    indexes: () => all,
    get,
    scan(filter: Filter, sort: Sort | undefined): { docs: Iterable<Stored>; ordered: boolean } {
      if (typeof filter._id === "string") {
        const doc = get(filter._id);
        return { docs: doc ? [doc] : [], ordered: true };
      }
      // Only an `_id` order (or none) can come straight off a range: every range ends on `_id`.
      const sortKeys = sort ? Object.keys(sort) : [];
      const idOrder =
        sortKeys.length === 0 ? 1 : sortKeys.length === 1 && sortKeys[0] === "_id" ? sort?._id : undefined;
      const reverse = idOrder === -1;
      const listed = idsListedIn(filter);
      if (listed) {
        // `_id: {$in: [...]}` (the outboxes' batched clears): one read per id, not a scan.
        const ids = [...new Set(listed)].sort();
        if (reverse) ids.reverse();
        const found = ids.map(get).filter((d): d is Stored => d !== undefined);
        return { docs: found, ordered: idOrder !== undefined || !sort };
      }
      const equalities = equalitiesOf(filter);
      const index = bestIndex(secondary, equalities);
      if (index) {
        const fields = Object.keys(index.keys).filter((f) => f !== "_id");
        const fixed = fields.slice(0, leadingEqualities(index, equalities));
        const prefix = prefixOf(
          index,
          fixed.map((f) => keyPart(equalities.get(f))),
        );
        // In `_id` order only when every field of the index before `_id` is pinned.
        const inIdOrder = fixed.length === fields.length && idOrder !== undefined;
        const range = inIdOrder
          ? idRange(prefix, idBoundsOf(filter), reverse)
          : { start: key(prefix), end: key(prefix.slice(0, -1) + AFTER) };
        const ids = (function* () {
          for (const entry of entries.keys(range)) {
            const found = text(entry);
            yield found.slice(found.lastIndexOf(SEP) + 1);
          }
        })();
        return { docs: byIds(ids), ordered: inIdOrder || !sort };
      }
      const range = idRange(name + SEP, idBoundsOf(filter), reverse);
      const all = (function* () {
        for (const { value } of docs.range(range)) yield decode(value);
      })();
      return { docs: all, ordered: idOrder !== undefined || !sort };
    },
    *idsWithKey(index: Index, parts: string[]) {
      const prefix = prefixOf(index, parts);
      for (const entry of entries.keys({ start: key(prefix), end: key(prefix.slice(0, -1) + AFTER) })) {
        yield text(entry).slice(prefix.length);
      }
    },
    put(next: Stored, previous: Stored | undefined) {
      if (previous) for (const entry of entryKeys(previous)) entries.remove(key(entry));
      docs.put(docKey(next._id), encode(next));
      for (const entry of entryKeys(next)) entries.put(key(entry), EMPTY);
    },
    remove(doc: Stored) {
      for (const entry of entryKeys(doc)) entries.remove(key(entry));
      docs.remove(docKey(doc._id));
    },
    addIndex(index: Index) {
      const added: StoredIndex = { ...index };
      secondary.push(added);
      all.push(added);
      saveIndexes();
      for (const doc of allDocs(docs, name)) {
        const entry = entryOf(added, doc);
        if (entry) entries.put(key(entry), EMPTY);
      }
    },
  };
}

/** The index whose leading fields the filter pins most; none when no index helps. */
function bestIndex(indexes: StoredIndex[], equalities: Map<string, unknown>): StoredIndex | undefined {
  let best: StoredIndex | undefined;
  let bestCount = 0;
  for (const index of indexes) {
    if (index.multikey) continue;
    const count = leadingEqualities(index, equalities);
    if (count > bestCount) {
      best = index;
      bestCount = count;
    }
  }
  return best;
}

function leadingEqualities(index: Index, equalities: Map<string, unknown>): number {
  let count = 0;
  for (const field of Object.keys(index.keys)) {
    if (field === "_id" || !equalities.has(field)) break;
    count++;
  }
  return count;
}

/** The key range of `prefix<_id>` keys within the filter's `_id` bounds (bounds are re-checked by the engine). */
function idRange(
  prefix: string,
  bounds: { gt?: string; gte?: string; lt?: string; lte?: string },
  reverse: boolean,
): { start: Key; end: Key; reverse: boolean } {
  const low = bounds.gte ?? bounds.gt;
  const high = bounds.lte ?? bounds.lt;
  const lowKey = low === undefined ? prefix : prefix + low;
  // Inclusive of `high` itself: `<high>` plus anything longer that starts with it is cut by the engine.
  const highKey = high === undefined ? prefix.slice(0, -1) + AFTER : `${prefix}${high}${SEP}`;
  return reverse
    ? { start: key(highKey), end: key(lowKey), reverse }
    : { start: key(lowKey), end: key(highKey), reverse };
}

function shortPart(part: string): string {
  if (part.length <= MAX_PART_LENGTH && !part.includes(SEP)) return part;
  return `#${createHash("sha256").update(part).digest("base64url")}`;
}

function encode(doc: Stored): Buffer {
  return Buffer.from(BSON.serialize(doc, { ignoreUndefined: false }));
}

function decode(value: Buffer): Stored {
  return BSON.deserialize(value) as Stored;
}

/** The ids of a filter whose `_id` is exactly `{$in: [string, …]}`, else undefined. */
function idsListedIn(filter: Filter): string[] | undefined {
  const cond = filter._id;
  if (cond === null || typeof cond !== "object" || Array.isArray(cond)) return undefined;
  const keys = Object.keys(cond);
  const listed = (cond as { $in?: unknown }).$in;
  if (keys.length !== 1 || !Array.isArray(listed) || !listed.every((id) => typeof id === "string")) return undefined;
  return listed as string[];
}
