/**
 * In-memory `Store` on mingo (tech-notes §6) for unit tests and the embedded dev mode. Every
 * operation runs synchronously between two awaits, so each one (findOneAndUpdate included) is atomic.
 * It is deliberately as strict as the strictest backend: whatever FerretDB 1.24 or MongoDB refuses,
 * it refuses too.
 */
import { find as mingoFind, update as mingoUpdate, Query } from "mingo";
import { BSON } from "mongodb";
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
  type Store,
  type Update,
  type UpdateResult,
} from "./store.js";

type Stored = Record<string, unknown> & { _id: string };
type Modifier = Parameters<typeof mingoUpdate>[1];

interface Index {
  name: string;
  keys: Record<string, 1 | -1>;
  unique: boolean;
}

interface CollectionState {
  name: string;
  /** Keyed by `_id`; Map order is insertion order, our "natural order". */
  docs: Map<string, Stored>;
  indexes: Index[];
}

const ID_INDEX: Index = { name: "_id_", keys: { _id: 1 }, unique: true };
const NUMERIC_OPERATORS = new Set(["$inc", "$mul"]);
const ARRAY_OPERATORS = new Set(["$push", "$addToSet", "$pull", "$pullAll", "$pop"]);
/** Marks a path that runs through an array, where MongoDB and FerretDB disagree (multikey indexes). */
const THROUGH_ARRAY = Symbol("through array");

export function createMemoryStore(): Store {
  const collections = new Map<string, CollectionState>();
  const stateOf = (name: string): CollectionState => {
    let state = collections.get(name);
    if (!state) {
      state = { name, docs: new Map(), indexes: [ID_INDEX] };
      collections.set(name, state);
    }
    return state;
  };
  return {
    collection: <T extends Doc>(name: string) => createMemoryCollection<T>(stateOf(name)),
    async ensureIndexes(name: string, indexes: IndexSpec[]) {
      for (const index of indexes) ensureIndex(stateOf(name), index);
    },
    async ping() {},
    async close() {},
  };
}

function createMemoryCollection<T extends Doc>(state: CollectionState): Collection<T> {
  const out = (doc: Stored): T => clone(doc) as T;
  return {
    name: state.name,
    async insertOne(doc) {
      assertPortableDocument(doc);
      insert(state, toStored(doc));
    },
    async insertMany(docs) {
      for (const doc of docs) assertPortableDocument(doc);
      for (const doc of docs) insert(state, toStored(doc));
    },
    async findOne(filter, options = {}) {
      const [doc] = select(state, filter, { ...options, limit: 1 });
      return doc ? out(doc) : null;
    },
    async find(filter, options = {}) {
      return select(state, filter, options).map(out);
    },
    async countDocuments(filter) {
      return select(state, filter, {}).length;
    },
    async updateOne(filter, update, options = {}) {
      assertPortableUpdate(update);
      const [target] = select(state, filter, { limit: 1 });
      if (target) return { matchedCount: 1, modifiedCount: modify(state, target, update) === target ? 0 : 1 };
      if (!options.upsert) return { matchedCount: 0, modifiedCount: 0 };
      return { matchedCount: 0, modifiedCount: 0, upsertedId: upsert(state, filter, update)._id };
    },
    async updateMany(filter, update) {
      assertPortableUpdate(update);
      const targets = select(state, filter, {});
      // Like the servers: documents updated before a unique clash stay updated.
      const modifiedCount = targets.filter((t) => modify(state, t, update) !== t).length;
      return { matchedCount: targets.length, modifiedCount };
    },
    async findOneAndUpdate(filter, update, options = {}) {
      assertPortableUpdate(update);
      const before = options.returnDocument === "before";
      const [target] = select(state, filter, { ...(options.sort && { sort: options.sort }), limit: 1 });
      if (target) {
        const next = modify(state, target, update);
        return out(before ? target : next);
      }
      if (!options.upsert) return null;
      const created = upsert(state, filter, update);
      return before ? null : out(created);
    },
    async replaceOne(filter, doc, options = {}): Promise<UpdateResult> {
      assertPortableDocument(doc);
      const [target] = select(state, filter, { limit: 1 });
      if (!target) {
        if (!options.upsert) return { matchedCount: 0, modifiedCount: 0 };
        return { matchedCount: 0, modifiedCount: 0, upsertedId: insert(state, toStored(doc))._id };
      }
      if (doc._id !== target._id) throw new Error("replaceOne would modify the immutable field '_id'");
      const next = toStored(doc);
      if (sameDocument(next, target)) return { matchedCount: 1, modifiedCount: 0 };
      assertUnique(state, next, target._id);
      state.docs.set(next._id, next);
      return { matchedCount: 1, modifiedCount: 1 };
    },
    async deleteOne(filter) {
      const [target] = select(state, filter, { limit: 1 });
      if (target) state.docs.delete(target._id);
      return { deletedCount: target ? 1 : 0 };
    },
    async deleteMany(filter) {
      const targets = select(state, filter, {});
      for (const t of targets) state.docs.delete(t._id);
      return { deletedCount: targets.length };
    },
  };
}

/** Matching stored documents (not copies) in sort order; a projection returns new objects. */
/** The documents a filter can match: the one its `_id` names, else all (the collection is a Map by `_id`). */
function candidates(state: CollectionState, filter: Filter): Stored[] {
  const id = filter._id;
  if (typeof id === "string") {
    const doc = state.docs.get(id);
    return doc ? [doc] : [];
  }
  return [...state.docs.values()];
}

function select(state: CollectionState, filter: Filter, options: FindOptions): Stored[] {
  assertPortableFilter(filter);
  let cursor = new Query(filter).find<Stored>(candidates(state, filter));
  if (options.sort) {
    assertPortableSort(options.sort);
    cursor = cursor.sort(options.sort);
  }
  if (options.skip) cursor = cursor.skip(options.skip);
  // MongoDB reads limit 0 as "no limit".
  if (options.limit) cursor = cursor.limit(options.limit);
  const docs = cursor.all();
  if (!options.projection) return docs;
  // Projected after sorting, so a sort may use a field the projection leaves out.
  assertPortableProjection(options.projection);
  return mingoFind<Stored>(docs, {}, options.projection).all();
}

function insert(state: CollectionState, doc: Stored): Stored {
  assertUnique(state, doc);
  state.docs.set(doc._id, doc);
  return doc;
}

/** Applies `update` to a stored document; returns the same object when nothing changed. */
function modify(state: CollectionState, target: Stored, update: Update): Stored {
  const { $setOnInsert: _onInsertOnly, ...modifier } = update;
  if (Object.keys(modifier).length === 0) return target;
  const next = clone(target);
  assertApplicable(next, modifier);
  mingoUpdate(next, modifier as Modifier);
  assertPortableDocument(next);
  if (sameDocument(next, target)) return target;
  assertUnique(state, next, target._id);
  state.docs.set(next._id, next);
  return next;
}

/** Inserts what an upsert inserts: the filter's equalities, then the update with $setOnInsert. */
function upsert(state: CollectionState, filter: Filter, update: Update): Stored {
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
  return insert(state, clone(doc));
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

function ensureIndex(state: CollectionState, spec: IndexSpec): void {
  assertPortableIndex(spec);
  const index: Index = {
    name: spec.name ?? defaultIndexName(spec.keys),
    keys: spec.keys,
    unique: spec.unique ?? false,
  };
  const sameKeys = (i: Index) => JSON.stringify(i.keys) === JSON.stringify(index.keys);
  const byName = state.indexes.find((i) => i.name === index.name);
  if (byName) {
    if (sameKeys(byName) && byName.unique === index.unique) return;
    throw new Error(`an index named "${index.name}" already exists with other keys or options`);
  }
  const byKeys = state.indexes.find(sameKeys);
  if (byKeys) throw new Error(`an index on the same keys already exists as "${byKeys.name}"`);
  // Like MongoDB, building a unique index over clashing documents fails.
  const probe: CollectionState = { ...state, docs: new Map(), indexes: [index] };
  for (const doc of state.docs.values()) insert(probe, doc);
  state.indexes.push(index);
}

/** MongoDB's default index name: `a_1_b_-1`. */
function defaultIndexName(keys: Record<string, 1 | -1>): string {
  return Object.entries(keys)
    .map(([k, d]) => `${k}_${d}`)
    .join("_");
}

/** Throws `DuplicateKeyError` if `doc` clashes on a unique index with a document other than `selfId`. */
function assertUnique(state: CollectionState, doc: Stored, selfId?: string): void {
  for (const index of state.indexes) {
    if (!index.unique) continue;
    if (index === ID_INDEX) {
      // The Map is the _id index: no scan.
      if (doc._id !== selfId && state.docs.has(doc._id)) {
        throw new DuplicateKeyError(
          `E11000 duplicate key error collection: ${state.name} index: _id_ dup key: ${JSON.stringify(doc._id)}`,
          { _id: doc._id },
        );
      }
      continue;
    }
    const key = indexKey(state, index, doc);
    for (const other of state.docs.values()) {
      if (other._id === selfId || indexKey(state, index, other) !== key) continue;
      const keyValue = Object.fromEntries(Object.keys(index.keys).map((path) => [path, valueAt(doc, path) ?? null]));
      throw new DuplicateKeyError(
        `E11000 duplicate key error collection: ${state.name} index: ${index.name} dup key: ${key}`,
        keyValue,
      );
    }
  }
}

/**
 * The comparable key of a document in an index. Missing counts as null, as on MongoDB (FerretDB 1.24
 * lets any number of documents miss a unique field; code must not rely on that). Arrays are refused:
 * MongoDB indexes each element, FerretDB the whole array.
 */
function indexKey(state: CollectionState, index: Index, doc: Stored): string {
  const values = Object.keys(index.keys).map((path) => {
    const value = valueAt(doc, path);
    if (value === THROUGH_ARRAY || Array.isArray(value)) {
      throw new Error(`not portable: array in "${path}", a field of the unique index "${index.name}" on ${state.name}`);
    }
    return value ?? null;
  });
  return BSON.EJSON.stringify(values, { relaxed: false });
}

function valueAt(doc: Record<string, unknown>, path: string): unknown {
  let current: unknown = doc;
  for (const part of path.split(".")) {
    if (Array.isArray(current)) return THROUGH_ARRAY;
    if (!isPlainObject(current)) return undefined;
    current = current[part];
  }
  return current;
}

/** A copy with `_id` first, as the servers store it. */
function toStored(doc: Doc): Stored {
  const { _id, ...rest } = doc;
  return clone({ _id, ...rest });
}

/**
 * Copies through BSON, as the driver would send and receive it: Dates and ObjectIds keep their
 * types, undefined becomes null, functions are dropped. `structuredClone` would strip BSON prototypes.
 */
function clone<D extends object>(doc: D): D {
  return BSON.deserialize(BSON.serialize(doc, { ignoreUndefined: false })) as D;
}

function sameDocument(a: Stored, b: Stored): boolean {
  return Buffer.from(BSON.serialize(a)).equals(BSON.serialize(b));
}
