/**
 * One collection of the SQLite store as the document engine's `Table`: its documents, its index
 * entries and how a query picks the range it reads.
 */
import { createHash } from "node:crypto";
import { BSON } from "bson";
import { ID_INDEX, type Index, type Stored, type Table } from "./document-table.js";
import { equalitiesOf, idBoundsOf, inListsOf } from "./filter-bounds.js";
import { keyPart, tryIndexKeyOf } from "./index-keys.js";
import {
  AFTER,
  EMPTY,
  type Key,
  type KeySpace,
  key,
  type MetaSpace,
  SEP,
  type StoredIndex,
  text,
} from "./sqlite-keyspace.js";
import type { Filter, Sort } from "./store.js";

/** Index keys stay short (LMDB's limit was 1978 bytes): a long field value is indexed by its digest. */
const MAX_PART_LENGTH = 200;

function* allDocs(docs: KeySpace, collection: string): Iterable<Stored> {
  for (const { value } of docs.range({ start: key(collection + SEP), end: key(collection + AFTER) })) {
    yield decode(value);
  }
}

export function createTable(name: string, docs: KeySpace, entries: KeySpace, meta: MetaSpace): Table {
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
      const inLists = listedRanges(secondary, equalities, inListsOf(filter));
      if (inLists && inLists.fields > (index ? leadingEqualities(index, equalities) : 0)) {
        // `field: {$in: [...]}` on an index's fields (a batch of parents): one key range per value.
        const ids = (function* () {
          for (const parts of inLists.prefixes) {
            const prefix = prefixOf(inLists.index, parts);
            for (const entry of entries.keys({ start: key(prefix), end: key(prefix.slice(0, -1) + AFTER) })) {
              const found = text(entry);
              yield found.slice(found.lastIndexOf(SEP) + 1);
            }
          }
        })();
        return { docs: byIds(ids), ordered: !sort };
      }
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

/** At most this many key ranges for one query's `$in` lists (their product); more is read as a scan. */
const MAX_LISTED_RANGES = 1_000;

/**
 * The index whose leading fields the filter pins most by equality or `$in`, with one key prefix
 * per combination of their values; none when no `$in` helps or the combinations are too many.
 */
function listedRanges(
  indexes: StoredIndex[],
  equalities: Map<string, unknown>,
  lists: Map<string, unknown[]>,
): { index: StoredIndex; fields: number; prefixes: string[][] } | undefined {
  if (lists.size === 0) return undefined;
  let best: { index: StoredIndex; fields: number; prefixes: string[][] } | undefined;
  for (const index of indexes) {
    if (index.multikey) continue;
    let prefixes: string[][] = [[]];
    let fields = 0;
    let usesList = false;
    for (const field of Object.keys(index.keys)) {
      if (field === "_id") break;
      const values = equalities.has(field) ? [equalities.get(field)] : lists.get(field);
      if (!values) break;
      const parts = [...new Set(values.map((v) => keyPart(v)))];
      if (prefixes.length * parts.length > MAX_LISTED_RANGES) break;
      usesList ||= !equalities.has(field);
      prefixes = prefixes.flatMap((prefix) => parts.map((part) => [...prefix, part]));
      fields++;
    }
    if (usesList && fields > (best?.fields ?? 0)) best = { index, fields, prefixes };
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
