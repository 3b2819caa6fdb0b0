/**
 * Reads a database of the LMDB store that Kiln's embedded mode kept until data format 2, key for
 * key: the SQLite store keeps the same three key spaces with the same keys and values, so a data
 * directory (or a backup) of the earlier format is carried over whole by `importEntries`.
 */
import { open } from "lmdb";
import type { KeySpaceEntry } from "./sqlite-store.js";

/** Every entry of the LMDB database at `path`, read in one snapshot; `close` releases it. */
export function readLmdbEntries(path: string): { entries: Iterable<KeySpaceEntry>; close(): Promise<void> } {
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
