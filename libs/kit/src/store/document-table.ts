/**
 * What a backend of the document engine (document-engine.ts) provides: a `Table` per collection,
 * where documents and index entries live, and an `Atomic` that runs one operation at a time.
 */
import type { Filter, Sort } from "./store.js";

export type Stored = Record<string, unknown> & { _id: string };

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
