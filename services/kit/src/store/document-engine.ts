/**
 * The document semantics every embedded `Store` backend shares: mingo matches, sorts and applies
 * updates (docs/architecture.md "Store backends"), and this module enforces unique indexes, upserts and the portable subset
 * exactly as FerretDB 1.24 and MongoDB do. A backend provides only a `Table`: where documents and
 * index entries live (a Map in memory, LMDB on disk) and how a filter's candidates are found.
 *
 * Every operation runs synchronously inside `atomic`, so each one (findOneAndUpdate included) is
 * atomic on every backend: between two awaits in memory, inside one write transaction on disk.
 */

import { BSON } from "bson";
import { find as mingoFind, update as mingoUpdate, Query } from "mingo";
import {
  assertPortableDocument,
  assertPortableFilter,
  assertPortableIndex,
  assertPortableProjection,
  assertPortableSort,
  assertPortableUpdate,
  isPlainObject,
  upsertIdOf,
  upsertSeed,
} from "./assert-portable.js";
import {
  type Collection,
  type Doc,
  DuplicateKeyError,
  type Filter,
  type FindOptions,
  type IndexSpec,
  type Sort,
  type Update,
  type UpdateResult,
} from "./store.js";

export type Stored = Record<string, unknown> & { _id: string };
type Modifier = Parameters<typeof mingoUpdate>[1];

export interface Index {
  name: string;
  keys: Record<string, 1 | -1>;
  unique: boolean;
}

/** Candidates for a filter; `ordered` when they already come in the requested sort order. */
export interface Scan {
  docs: Iterable<Stored>;
  ordered: boolean;
}

/** Where one collection's documents and index entries live. Every method is synchronous. */
export interface Table {
  readonly name: string;
  indexes(): Index[];
  get(id: string): Stored | undefined;
  /** A superset of the documents `filter` matches (the engine tests each one). */
  scan(filter: Filter, sort: Sort | undefined): Scan;
  /** Ids of the documents whose key in `index` is `key` (see `indexKeyOf`). */
  idsWithKey(index: Index, key: string[]): Iterable<string>;
  /** Stores `next` (replacing `previous` when given) and keeps every index in step. */
  put(next: Stored, previous: Stored | undefined): void;
  remove(doc: Stored): void;
  addIndex(index: Index): void;
}

/** Runs one operation atomically and resolves once it is durable. */
export type Atomic = <R>(operation: () => R) => Promise<R>;

export const ID_INDEX: Index = { name: "_id_", keys: { _id: 1 }, unique: true };
const NUMERIC_OPERATORS = new Set(["$inc", "$mul"]);
const ARRAY_OPERATORS = new Set(["$push", "$addToSet", "$pull", "$pullAll", "$pop"]);
/** Marks a path that runs through an array, where MongoDB and FerretDB disagree (multikey indexes). */
export const THROUGH_ARRAY = Symbol("through array");

export function createDocumentCollection<T extends Doc>(table: Table, atomic: Atomic): Collection<T> {
  const out = (doc: Stored): T => clone(doc) as T;
  return {
    name: table.name,
    async insertOne(doc) {
      assertPortableDocument(doc);
      const stored = toStored(doc);
      await atomic(() => insert(table, stored));
    },
    async insertMany(docs) {
      for (const doc of docs) assertPortableDocument(doc);
      const stored = docs.map(toStored);
      // Ordered, like the servers: the documents before a clash stay inserted.
      await atomic(() => {
        for (const doc of stored) insert(table, doc);
      });
    },
    async findOne(filter, options = {}) {
      const [doc] = select(table, filter, { ...options, limit: 1 });
      return doc ? out(doc) : null;
    },
    async find(filter, options = {}) {
      return select(table, filter, options).map(out);
    },
    async countDocuments(filter) {
      return select(table, filter, {}).length;
    },
    async updateOne(filter, update, options = {}) {
      assertPortableUpdate(update);
      return atomic((): UpdateResult => {
        const [target] = select(table, filter, { limit: 1 });
        if (target) return { matchedCount: 1, modifiedCount: modify(table, target, update) === target ? 0 : 1 };
        if (!options.upsert) return { matchedCount: 0, modifiedCount: 0 };
        return { matchedCount: 0, modifiedCount: 0, upsertedId: upsert(table, filter, update)._id };
      });
    },
    async updateMany(filter, update) {
      assertPortableUpdate(update);
      return atomic((): UpdateResult => {
        const targets = select(table, filter, {});
        // Like the servers: documents updated before a unique clash stay updated.
        const modifiedCount = targets.filter((t) => modify(table, t, update) !== t).length;
        return { matchedCount: targets.length, modifiedCount };
      });
    },
    async findOneAndUpdate(filter, update, options = {}) {
      assertPortableUpdate(update);
      const before = options.returnDocument === "before";
      const result = await atomic(() => {
        const [target] = select(table, filter, { ...(options.sort && { sort: options.sort }), limit: 1 });
        if (target) {
          const next = modify(table, target, update);
          return before ? target : next;
        }
        if (!options.upsert) return null;
        const created = upsert(table, filter, update);
        return before ? null : created;
      });
      return result ? out(result) : null;
    },
    async replaceOne(filter, doc, options = {}): Promise<UpdateResult> {
      assertPortableDocument(doc);
      const next = toStored(doc);
      return atomic((): UpdateResult => {
        const [target] = select(table, filter, { limit: 1 });
        if (!target) {
          if (!options.upsert) return { matchedCount: 0, modifiedCount: 0 };
          return { matchedCount: 0, modifiedCount: 0, upsertedId: insert(table, next)._id };
        }
        if (next._id !== target._id) throw new Error("replaceOne would modify the immutable field '_id'");
        if (sameDocument(next, target)) return { matchedCount: 1, modifiedCount: 0 };
        assertUnique(table, next, target._id);
        table.put(next, target);
        return { matchedCount: 1, modifiedCount: 1 };
      });
    },
    async deleteOne(filter) {
      return atomic(() => {
        const [target] = select(table, filter, { limit: 1 });
        if (target) table.remove(target);
        return { deletedCount: target ? 1 : 0 };
      });
    },
    async deleteMany(filter) {
      return atomic(() => {
        const targets = select(table, filter, {});
        for (const t of targets) table.remove(t);
        return { deletedCount: targets.length };
      });
    },
  };
}

/** Matching stored documents in sort order; a projection returns new objects. */
function select(table: Table, filter: Filter, options: FindOptions): Stored[] {
  assertPortableFilter(filter);
  if (options.sort) assertPortableSort(options.sort);
  if (options.projection) assertPortableProjection(options.projection);
  const query = new Query(filter);
  const scan = table.scan(filter, options.sort);
  let docs: Stored[];
  if (scan.ordered) {
    // Stop reading as soon as the page is full: the backend hands documents over lazily.
    docs = [];
    let toSkip = options.skip ?? 0;
    // MongoDB reads limit 0 as "no limit".
    const limit = options.limit || Number.POSITIVE_INFINITY;
    for (const doc of scan.docs) {
      if (docs.length >= limit) break;
      if (!query.test(doc)) continue;
      if (toSkip > 0) toSkip--;
      else docs.push(options.projection ? projectOne(doc, options.projection) : doc);
    }
    // Already in order: each document was projected as it was read.
    if (options.projection) return docs;
  } else {
    // One decoded document at a time: only the matching ones are kept, and projected as they are
    // read when the projection keeps the sort's fields (a view listing 200 versions of 300 KB
    // each held all of them at once, and took pnpm start down).
    const early = options.projection && keepsFields(options.projection, Object.keys(options.sort ?? {}));
    const matched: Stored[] = [];
    for (const doc of scan.docs) {
      if (!query.test(doc)) continue;
      matched.push(early ? projectOne(doc, options.projection ?? {}) : doc);
    }
    let cursor = mingoFind<Stored>(matched, {});
    if (options.sort) cursor = cursor.sort(options.sort);
    if (options.skip) cursor = cursor.skip(options.skip);
    if (options.limit) cursor = cursor.limit(options.limit);
    docs = cursor.all();
    if (early) return docs;
  }
  if (!options.projection) return docs;
  // Projected after sorting, so a sort may use a field the projection leaves out.
  return mingoFind<Stored>(docs, {}, options.projection).all();
}

function projectOne(doc: Stored, projection: Record<string, 0 | 1>): Stored {
  return mingoFind<Stored>([doc], {}, projection).all()[0] ?? doc;
}

/** Whether a projection keeps every top-level field of `fields` (an inclusion names them, an exclusion does not). */
function keepsFields(projection: Record<string, 0 | 1>, fields: string[]): boolean {
  const entries = Object.entries(projection).filter(([k]) => k !== "_id");
  const inclusion = entries.some(([, v]) => v === 1);
  return fields.every((f) => {
    const top = f.split(".")[0] ?? f;
    if (top === "_id") return projection._id !== 0;
    const named = entries.some(([k]) => k === top || k.startsWith(`${top}.`));
    return inclusion ? projection[top] === 1 : !named;
  });
}

function insert(table: Table, doc: Stored): Stored {
  assertUnique(table, doc);
  table.put(doc, undefined);
  return doc;
}

/** Applies `update` to a stored document; returns the same object when nothing changed. */
function modify(table: Table, target: Stored, update: Update): Stored {
  const { $setOnInsert: _onInsertOnly, ...modifier } = update;
  if (Object.keys(modifier).length === 0) return target;
  const next = clone(target);
  assertApplicable(next, modifier);
  mingoUpdate(next, modifier as Modifier);
  assertPortableDocument(next);
  if (sameDocument(next, target)) return target;
  assertUnique(table, next, target._id);
  table.put(next, target);
  return next;
}

/** Inserts what an upsert inserts: the filter's equalities, then the update with $setOnInsert. */
function upsert(table: Table, filter: Filter, update: Update): Stored {
  const _id = upsertIdOf(filter, update);
  const { _id: _fromFilter, ...seed } = upsertSeed(filter);
  const { _id: _fromOnInsert, ...onInsert } = update.$setOnInsert ?? {};
  const { $setOnInsert: _merged, ...modifier } = update;
  const doc: Stored = { _id };
  if (Object.keys(seed).length > 0) mingoUpdate(doc, { $set: seed } as Modifier);
  // assertPortableUpdate already refused paths shared by $set and $setOnInsert.
  const merged = Object.keys(onInsert).length > 0 ? { ...modifier, $set: { ...modifier.$set, ...onInsert } } : modifier;
  assertApplicable(doc, merged);
  if (Object.keys(merged).length > 0) mingoUpdate(doc, merged as Modifier);
  assertPortableDocument(doc);
  return insert(table, clone(doc));
}

/** mingo silently skips `$inc` on a string or `$push` onto a non-array; MongoDB and FerretDB refuse. */
function assertApplicable(doc: Stored, modifier: Update): void {
  for (const [op, fields] of Object.entries(modifier)) {
    for (const path of Object.keys(fields ?? {})) {
      const current = valueAt(doc, path);
      if (current === undefined || current === THROUGH_ARRAY) continue;
      if (NUMERIC_OPERATORS.has(op) && typeof current !== "number") {
        throw new Error(`Cannot apply ${op} to the non-numeric field "${path}" of ${doc._id}`);
      }
      if (ARRAY_OPERATORS.has(op) && !Array.isArray(current)) {
        throw new Error(`Cannot apply ${op} to the non-array field "${path}" of ${doc._id}`);
      }
    }
  }
}

/**
 * Adds an index, as `ensureIndexes` does on the servers: idempotent for the same name, keys and
 * options; refused when the name or the keys are taken otherwise, or when existing documents clash.
 */
export function ensureIndex(table: Table, spec: IndexSpec): void {
  assertPortableIndex(spec);
  const index: Index = {
    name: spec.name ?? defaultIndexName(spec.keys),
    keys: spec.keys,
    unique: spec.unique ?? false,
  };
  const sameKeys = (i: Index) => JSON.stringify(i.keys) === JSON.stringify(index.keys);
  const indexes = table.indexes();
  const byName = indexes.find((i) => i.name === index.name);
  if (byName) {
    if (sameKeys(byName) && byName.unique === index.unique) return;
    throw new Error(`an index named "${index.name}" already exists with other keys or options`);
  }
  const byKeys = indexes.find(sameKeys);
  if (byKeys) throw new Error(`an index on the same keys already exists as "${byKeys.name}"`);
  // Like MongoDB, building a unique index over clashing documents fails.
  if (index.unique) {
    const seen = new Set<string>();
    for (const doc of table.scan({}, undefined).docs) {
      const key = indexKeyOf(table.name, index, doc).join("\u0000");
      if (seen.has(key)) throw duplicateKey(table.name, index, doc);
      seen.add(key);
    }
  }
  table.addIndex(index);
}

/** MongoDB's default index name: `a_1_b_-1`. */
function defaultIndexName(keys: Record<string, 1 | -1>): string {
  return Object.entries(keys)
    .map(([k, d]) => `${k}_${d}`)
    .join("_");
}

/** Throws `DuplicateKeyError` if `doc` clashes on a unique index with a document other than `selfId`. */
function assertUnique(table: Table, doc: Stored, selfId?: string): void {
  for (const index of table.indexes()) {
    if (!index.unique) continue;
    if (index.name === ID_INDEX.name) {
      if (doc._id !== selfId && table.get(doc._id)) throw duplicateKey(table.name, ID_INDEX, doc);
      continue;
    }
    const key = indexKeyOf(table.name, index, doc);
    for (const id of table.idsWithKey(index, key)) {
      if (id !== selfId) throw duplicateKey(table.name, index, doc);
    }
  }
}

function duplicateKey(collection: string, index: Index, doc: Stored): DuplicateKeyError {
  const keyValue = Object.fromEntries(Object.keys(index.keys).map((path) => [path, valueAt(doc, path) ?? null]));
  const shown =
    index === ID_INDEX ? JSON.stringify(doc._id) : BSON.EJSON.stringify(Object.values(keyValue), { relaxed: false });
  return new DuplicateKeyError(
    `E11000 duplicate key error collection: ${collection} index: ${index.name} dup key: ${shown}`,
    keyValue,
  );
}

/**
 * The comparable key of a document in an index, one canonical Extended JSON text per field. Missing
 * counts as null, as on MongoDB (FerretDB 1.24 lets any number of documents miss a unique field; code
 * must not rely on that). Arrays are refused in unique indexes: MongoDB indexes each element,
 * FerretDB the whole array (`tryIndexKeyOf` answers null for them instead of throwing).
 */
export function indexKeyOf(collection: string, index: Index, doc: Stored): string[] {
  const key = tryIndexKeyOf(index, doc);
  if (key) return key;
  const path = Object.keys(index.keys).find((p) => {
    const v = valueAt(doc, p);
    return v === THROUGH_ARRAY || Array.isArray(v);
  });
  throw new Error(`not portable: array in "${path}", a field of the unique index "${index.name}" on ${collection}`);
}

export function tryIndexKeyOf(index: Index, doc: Record<string, unknown>): string[] | null {
  const key: string[] = [];
  for (const path of Object.keys(index.keys)) {
    const value = valueAt(doc, path);
    if (value === THROUGH_ARRAY || Array.isArray(value)) return null;
    key.push(keyPart(value));
  }
  return key;
}

/** One field of an index key: canonical Extended JSON, so 1 and "1" and a Date never collide. */
export function keyPart(value: unknown): string {
  return BSON.EJSON.stringify([value ?? null], { relaxed: false });
}

export function valueAt(doc: Record<string, unknown>, path: string): unknown {
  let current: unknown = doc;
  for (const part of path.split(".")) {
    if (Array.isArray(current)) return THROUGH_ARRAY;
    if (!isPlainObject(current)) return undefined;
    current = current[part];
  }
  return current;
}

/**
 * The fields a filter pins to one value by plain equality (top level, or inside a top-level `$and`):
 * what a backend may look up in an index. Only scalars count: an equality on an array or object
 * matches elements and whole values in ways an index key does not.
 */
export function equalitiesOf(filter: Filter): Map<string, unknown> {
  const found = new Map<string, unknown>();
  const visit = (f: Filter) => {
    for (const [key, value] of Object.entries(f)) {
      if (key === "$and" && Array.isArray(value)) {
        for (const part of value) if (isPlainObject(part)) visit(part);
      } else if (!key.startsWith("$") && isScalar(value) && !found.has(key)) {
        found.set(key, value);
      }
    }
  };
  visit(filter);
  return found;
}

function isScalar(value: unknown): boolean {
  return (
    value === null ||
    typeof value === "string" ||
    typeof value === "boolean" ||
    (typeof value === "number" && Number.isFinite(value)) ||
    value instanceof Date
  );
}

/** Bounds on `_id` that a filter sets with $gt/$gte/$lt/$lte on strings (top level or in `$and`). */
export function idBoundsOf(filter: Filter): { gt?: string; gte?: string; lt?: string; lte?: string } {
  const bounds: { gt?: string; gte?: string; lt?: string; lte?: string } = {};
  const visit = (f: Filter) => {
    for (const [key, value] of Object.entries(f)) {
      if (key === "$and" && Array.isArray(value)) {
        for (const part of value) if (isPlainObject(part)) visit(part);
      } else if (key === "_id" && isPlainObject(value)) {
        for (const op of ["gt", "gte", "lt", "lte"] as const) {
          const bound = value[`$${op}`];
          if (typeof bound !== "string") continue;
          const current = bounds[op];
          const tighter = current === undefined || (op.startsWith("g") ? bound > current : bound < current);
          if (tighter) bounds[op] = bound;
        }
      }
    }
  };
  visit(filter);
  return bounds;
}

/** A copy with `_id` first, as the servers store it. */
export function toStored(doc: Doc): Stored {
  const { _id, ...rest } = doc;
  return clone({ _id, ...rest });
}

/**
 * Copies through BSON, as the driver would send and receive it: Dates and ObjectIds keep their
 * types, undefined becomes null, functions are dropped. `structuredClone` would strip BSON prototypes.
 */
export function clone<D extends object>(doc: D): D {
  return BSON.deserialize(BSON.serialize(doc, { ignoreUndefined: false })) as D;
}

function sameDocument(a: Stored, b: Stored): boolean {
  return Buffer.from(BSON.serialize(a)).equals(BSON.serialize(b));
}
