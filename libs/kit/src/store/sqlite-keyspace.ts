/**
 * The SQLite store's ordered key spaces (documents, index entries, index lists), the database's
 * setup, and the write-ahead log's timed flush.
 */
import { type FileHandle, open } from "node:fs/promises";
import type Database from "better-sqlite3";
import type { Index } from "./document-table.js";

export type Key = Buffer;
export const key = (text: string): Key => Buffer.from(text, "utf8");
export const text = (k: Key): string => k.toString("utf8");
export const SEP = "\u0000";
/** Above every key that continues a `prefix + SEP` (SEP is the lowest code unit). */
export const AFTER = "\u0001";
/** Rows read per statement while a range is walked; a scan that stops early reads little. */
export const FIRST_CHUNK = 16;
export const MAX_CHUNK = 512;

export interface StoredIndex extends Index {
  /** Set once a document held an array in one of its fields: equality lookups may then miss it. */
  multikey?: boolean;
}

/** An ordered key space: the few operations the tables need of it. */
export interface KeySpace {
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

export interface KeyRange {
  start: Key;
  end: Key;
  reverse?: boolean;
}

export interface MetaSpace {
  get(k: string): StoredIndex[] | undefined;
  put(k: string, value: StoredIndex[]): void;
}

export const EMPTY = Buffer.alloc(0);

/** The log mode, the flush per commit or not, and the three key tables. */
export function prepareDatabase(db: Database.Database, syncEachCommit: boolean): void {
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
export function keySpace(db: Database.Database, table: "docs" | "entries", withValues: boolean): KeySpace {
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
export function logSyncer(logFile: string, intervalMs: number) {
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
