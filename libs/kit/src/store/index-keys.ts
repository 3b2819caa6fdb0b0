/**
 * Indexes of the document engine as the servers keep them: adding one (`ensureIndex`), the key of
 * a document in one, and the unique check every write makes.
 */
import { BSON } from "bson";
import { assertPortableIndex, isPlainObject } from "./assert-portable.js";
import { ID_INDEX, type Index, type Stored, type Table } from "./document-table.js";
import { DuplicateKeyError, type IndexSpec } from "./store.js";

/** Marks a path that runs through an array, where MongoDB and FerretDB disagree (multikey indexes). */
export const THROUGH_ARRAY = Symbol("through array");

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
export function assertUnique(table: Table, doc: Stored, selfId?: string): void {
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
