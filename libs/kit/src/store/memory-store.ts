/**
 * In-memory `Store` for unit tests and `KILN_DATA_DIR=:memory:`: the shared document engine
 * (document-engine.ts) over a Map per collection. Every operation runs synchronously between two
 * awaits. It is deliberately as strict as the strictest backend: whatever FerretDB 1.24 or MongoDB
 * refuses, it refuses too.
 */
import { createDocumentCollection } from "./document-engine.js";
import { ID_INDEX, type Index, type Stored, type Table } from "./document-table.js";
import { ensureIndex, indexKeyOf } from "./index-keys.js";
import type { Collection, Doc, IndexSpec, Store } from "./store.js";

/**
 * Keyed by `_id`; Map order is insertion order, the "natural order". Each unique secondary index
 * keeps a map from its key to the ids that have it, so a unique check does not read every document.
 */
function createMemoryTable(name: string): Table {
  const docs = new Map<string, Stored>();
  const indexes: Index[] = [ID_INDEX];
  const keyed = new Map<string, Map<string, Set<string>>>();
  const keyOf = (index: Index, doc: Stored) => indexKeyOf(name, index, doc).join("\u0000");
  const enter = (index: Index, doc: Stored) => {
    const byKey = keyed.get(index.name);
    if (!byKey) return;
    const key = keyOf(index, doc);
    const ids = byKey.get(key);
    if (ids) ids.add(doc._id);
    else byKey.set(key, new Set([doc._id]));
  };
  const leave = (doc: Stored) => {
    for (const index of indexes) {
      const byKey = keyed.get(index.name);
      if (!byKey) continue;
      const key = keyOf(index, doc);
      const ids = byKey.get(key);
      ids?.delete(doc._id);
      if (ids?.size === 0) byKey.delete(key);
    }
  };
  return {
    name,
    indexes: () => indexes,
    get: (id) => docs.get(id),
    scan(filter) {
      const id = filter._id;
      if (typeof id === "string") {
        const doc = docs.get(id);
        return { docs: doc ? [doc] : [], ordered: false };
      }
      return { docs: [...docs.values()], ordered: false };
    },
    idsWithKey(index, key) {
      return keyed.get(index.name)?.get(key.join("\u0000")) ?? [];
    },
    put(next, previous) {
      const replaced = previous ?? docs.get(next._id);
      if (replaced) leave(replaced);
      docs.set(next._id, next);
      for (const index of indexes) enter(index, next);
    },
    remove(doc) {
      leave(doc);
      docs.delete(doc._id);
    },
    addIndex(index) {
      indexes.push(index);
      if (index.name === ID_INDEX.name || !index.unique) return;
      keyed.set(index.name, new Map());
      for (const doc of docs.values()) enter(index, doc);
    },
  };
}

export function createMemoryStore(): Store {
  const tables = new Map<string, Table>();
  const tableOf = (name: string) => {
    let table = tables.get(name);
    if (!table) {
      table = createMemoryTable(name);
      tables.set(name, table);
    }
    return table;
  };
  const atomic = async <R>(operation: () => R): Promise<R> => operation();
  return {
    collection: <T extends Doc>(name: string): Collection<T> => createDocumentCollection<T>(tableOf(name), atomic),
    async ensureIndexes(name: string, indexes: IndexSpec[]) {
      const table = tableOf(name);
      for (const index of indexes) ensureIndex(table, index);
    },
    async ping() {},
    async close() {},
  };
}
