/**
 * In-memory `Store` for unit tests and `KILN_DATA_DIR=:memory:`: the shared document engine
 * (document-engine.ts) over a Map per collection. Every operation runs synchronously between two
 * awaits. It is deliberately as strict as the strictest backend: whatever FerretDB 1.24 or MongoDB
 * refuses, it refuses too.
 */
import {
  createDocumentCollection,
  ensureIndex,
  ID_INDEX,
  type Index,
  indexKeyOf,
  type Stored,
  type Table,
} from "./document-engine.js";
import type { Collection, Doc, IndexSpec, Store } from "./store.js";

/** Keyed by `_id`; Map order is insertion order, the "natural order". */
function createMemoryTable(name: string): Table {
  const docs = new Map<string, Stored>();
  const indexes: Index[] = [ID_INDEX];
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
    *idsWithKey(index, key) {
      const wanted = key.join("\u0000");
      for (const doc of docs.values()) {
        if (indexKeyOf(name, index, doc).join("\u0000") === wanted) yield doc._id;
      }
    },
    put(next) {
      docs.set(next._id, next);
    },
    remove(doc) {
      docs.delete(doc._id);
    },
    addIndex(index) {
      indexes.push(index);
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
