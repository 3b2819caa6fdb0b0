/**
 * A durable embedded `Store` on LMDB (lmdb-js: ACID, memory-mapped, a prebuilt binary from the
 * registry, readable by a second process while the server writes), with the document semantics of
 * the shared engine (document-engine.ts), so it passes the same contract suite as MongoDB.
 *
 * Documents live on disk, not in the heap: one LMDB database holds every collection's documents as
 * BSON under `<collection>\0<_id>`, another every index entry under
 * `<collection>\0<index>\0<field key>…\0<_id>`. A query with equalities on an index's leading fields
 * reads that index's range, a query on `_id` bounds reads the documents' range, and when either
 * already comes in the requested `_id` order the engine stops at the page's end. Each write runs in
 * one LMDB write transaction (atomic: a document and its index entries together or not at all) and
 * is acknowledged once committed and flushed to disk.
 */
import { createHash } from "node:crypto";
import { rm } from "node:fs/promises";
import { type Database, open, type RootDatabase } from "lmdb";
import { BSON } from "mongodb";
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
import type { Collection, Doc, Filter, IndexSpec, Sort, Store } from "./store.js";

type Key = Buffer;
const key = (text: string): Key => Buffer.from(text, "utf8");
const text = (k: Key): string => k.toString("utf8");
const SEP = "\u0000";
/** Above every key that continues a `prefix + SEP` (SEP is the lowest code unit). */
const AFTER = "\u0001";
/** LMDB keys are at most 1978 bytes: a long field value is indexed by its digest. */
const MAX_PART_LENGTH = 200;

interface StoredIndex extends Index {
  /** Set once a document held an array in one of its fields: equality lookups may then miss it. */
  multikey?: boolean;
}

export interface LmdbStoreOptions {
  /** The database file (e.g. `.kiln/store.mdb`); its directory is created when missing. */
  path: string;
  /** Wait for the OS to flush each commit to disk before acknowledging it (default true). */
  flush?: boolean;
}

export interface LmdbStore extends Store {
  /** A view of the same database whose collections are named `<prefix>/<name>`: one per service. */
  scope(prefix: string): Store;
  /** A consistent single-file copy of the whole database, taken while it keeps serving (LMDB's hot copy). */
  backup(targetFile: string): Promise<void>;
}

export function createLmdbStore(options: LmdbStoreOptions): LmdbStore {
  const env: RootDatabase = open({ path: options.path, maxDbs: 8 });
  // Binary keys: lmdb's default key encoding reads a string holding \0 back as an array.
  const docs = env.openDB<Buffer, Key>({ name: "docs", encoding: "binary", keyEncoding: "binary" });
  const entries = env.openDB<string, Key>({ name: "index", encoding: "string", keyEncoding: "binary" });
  const meta = env.openDB<StoredIndex[], string>({ name: "meta", encoding: "json" });
  const flush = options.flush ?? true;

  const atomic: Atomic = async (operation) => {
    // lmdb-js commits what a callback wrote before it threw; the engine checks before it writes,
    // so a refused operation has written nothing (and insertMany keeps what came before a clash,
    // as the servers do).
    const result = await env.transaction(operation);
    if (flush) await env.flushed;
    return result;
  };

  const tables = new Map<string, Table>();
  const tableOf = (name: string): Table => {
    let table = tables.get(name);
    if (!table) {
      table = createLmdbTable(name, docs, entries, meta);
      tables.set(name, table);
    }
    return table;
  };
  const view = (prefix: string): Store => ({
    collection: <T extends Doc>(name: string): Collection<T> =>
      createDocumentCollection<T>(tableOf(prefix + name), atomic),
    async ensureIndexes(name: string, indexes: IndexSpec[]) {
      const table = tableOf(prefix + name);
      for (const index of indexes) {
        await atomic(() => ensureIndex(table, index));
      }
    },
    async ping() {
      env.getStats();
    },
    // A scoped view shares the database; only the root closes it.
    async close() {},
  });

  return {
    ...view(""),
    scope: (prefix) => view(`${prefix}/`),
    async close() {
      await env.flushed;
      await env.close();
    },
    async backup(targetFile: string) {
      await env.backup(targetFile, true);
      // The copy is a complete database; the lock file lmdb leaves beside it is not part of it.
      await rm(`${targetFile}-lock`, { force: true });
    },
  };
}

function* allDocs(docs: Database<Buffer, Key>, collection: string): Iterable<Stored> {
  for (const { value } of docs.getRange({ start: key(collection + SEP), end: key(collection + AFTER) })) {
    yield decode(value);
  }
}

function createLmdbTable(
  name: string,
  docs: Database<Buffer, Key>,
  entries: Database<string, Key>,
  meta: Database<StoredIndex[], string>,
): Table {
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
          for (const entry of entries.getKeys(range)) {
            const found = text(entry);
            yield found.slice(found.lastIndexOf(SEP) + 1);
          }
        })();
        return { docs: byIds(ids), ordered: inIdOrder || !sort };
      }
      const range = idRange(name + SEP, idBoundsOf(filter), reverse);
      const all = (function* () {
        for (const { value } of docs.getRange(range)) yield decode(value);
      })();
      return { docs: all, ordered: idOrder !== undefined || !sort };
    },
    *idsWithKey(index: Index, parts: string[]) {
      const prefix = prefixOf(index, parts);
      for (const entry of entries.getKeys({ start: key(prefix), end: key(prefix.slice(0, -1) + AFTER) })) {
        yield text(entry).slice(prefix.length);
      }
    },
    put(next: Stored, previous: Stored | undefined) {
      if (previous) for (const entry of entryKeys(previous)) entries.remove(key(entry));
      docs.put(docKey(next._id), encode(next));
      for (const entry of entryKeys(next)) entries.put(key(entry), "");
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
        if (entry) entries.put(key(entry), "");
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
