/**
 * Reads a database of the LMDB store that Kiln's embedded mode kept until data format 2, key for
 * key: the SQLite store keeps the same three key spaces with the same keys and values, so a data
 * directory (or a backup) of the earlier format is carried over whole by `importEntries`.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { open } from "lmdb";
import type { KeySpaceEntry } from "./sqlite-store.js";

/** LMDB's magic number, in the meta page at the start of every database file (little-endian). */
const LMDB_MAGIC = Buffer.from([0xde, 0xc0, 0xef, 0xbe]);

/**
 * Every entry of the LMDB database at `path`, read in one snapshot; `close` releases it. Throws for
 * a file that is not an LMDB database: LMDB itself would map it and crash the process.
 */
export function readLmdbEntries(path: string): { entries: Iterable<KeySpaceEntry>; close(): Promise<void> } {
  if (!startsLikeLmdb(path)) throw new Error(`${path} is not an LMDB database`);
  const env = open({ path, maxDbs: 8, readOnly: true });
  const docs = env.openDB<Buffer, Buffer>({ name: "docs", encoding: "binary", keyEncoding: "binary" });
  const index = env.openDB<string, Buffer>({ name: "index", encoding: "string", keyEncoding: "binary" });
  const meta = env.openDB<unknown, string>({ name: "meta", encoding: "json" });
  function* entries(): Iterable<KeySpaceEntry> {
    for (const { key, value } of docs.getRange()) yield { space: "docs", key, value };
    for (const key of index.getKeys()) yield { space: "index", key };
    for (const { key, value } of meta.getRange()) yield { space: "meta", key, value };
  }
  return { entries: entries(), close: () => env.close() };
}

function startsLikeLmdb(path: string): boolean {
  const fd = openSync(path, "r");
  try {
    const head = Buffer.alloc(64);
    const read = readSync(fd, head, 0, head.length, 0);
    return head.subarray(0, read).includes(LMDB_MAGIC);
  } finally {
    closeSync(fd);
  }
}
