/**
 * The document semantics every embedded `Store` backend shares: mingo matches, sorts and applies
 * updates (docs/architecture.md "Store backends"), and this module enforces upserts, the portable
 * subset and (through index-keys.ts) unique indexes exactly as FerretDB 1.24 and MongoDB do. A
 * backend provides only a `Table` (document-table.ts): where documents and index entries live (a
 * Map in memory, SQLite on disk) and how a filter's candidates are found.
 *
 * Every operation runs synchronously inside `atomic`, so each one (findOneAndUpdate included) is
 * atomic on every backend: between two awaits in memory, inside one write transaction on disk.
 */

import { update as mingoUpdate } from "mingo";
import { assertPortableDocument, assertPortableUpdate, upsertIdOf, upsertSeed } from "./assert-portable.js";
import { clone, sameDocument, toStored } from "./document-copy.js";
import { select } from "./document-select.js";
import type { Atomic, Stored, Table } from "./document-table.js";
import { assertUnique, THROUGH_ARRAY, valueAt } from "./index-keys.js";
import {
  type Collection,
  type Doc,
  type Filter,
  isDuplicateKeyError,
  type Update,
  type UpdateResult,
} from "./store.js";

type Modifier = Parameters<typeof mingoUpdate>[1];
const NUMERIC_OPERATORS = new Set(["$inc", "$mul"]);
const ARRAY_OPERATORS = new Set(["$push", "$addToSet", "$pull", "$pullAll", "$pop"]);

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
    async insertUnordered(docs) {
      for (const doc of docs) assertPortableDocument(doc);
      const stored = docs.map(toStored);
      return atomic(() => {
        const clashed: number[] = [];
        stored.forEach((doc, i) => {
          try {
            insert(table, doc);
          } catch (e) {
            if (!isDuplicateKeyError(e)) throw e;
            clashed.push(i);
          }
        });
        return clashed;
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
