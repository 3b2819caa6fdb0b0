/**
 * The files a promptfoo config refers to (`file://prompts.txt`, `file://tests.csv`, and those the
 * tests files refer to in turn), read from disk relative to the config, to send with it
 * (docs/bundles.md "promptfoo"). Code (`.js`, `.py`, `file://x.py:fn`) and globs are not read: Kiln
 * runs no code, and the converter reports both; a file not found is left out, and the import reports
 * it for the item needing it.
 */
import { readFile, stat } from "node:fs/promises";
import { dirname, posix, resolve } from "node:path";

/** A `file://` reference in YAML, JSON, CSV or JSONL text: up to a quote, a blank, a comma or a bracket. */
const REF = /file:\/\/([^\s"'`,\]})]+)/g;

/** At most this many files, and this much text in all (the import's body limit is 8 MiB). */
const MAX_FILES = 500;
const MAX_BYTES = 8 * 1_048_576;

const isCode = (path: string) => /\.(?:[cm]?[jt]s|py)(?::[\w.]+)?$/i.test(path) || /:[A-Za-z_]\w*$/.test(path);
const isGlob = (path: string) => /[*?[\]{}]/.test(path);

/** A reference's path as the files' key: `./a/../b.txt` → `b.txt`. */
export const keyOf = (path: string) => {
  const normal = posix.normalize(path.replace(/\\/g, "/"));
  return normal.startsWith("./") ? normal.slice(2) : normal;
};

export interface ReferencedFiles {
  files: Record<string, string>;
  /** References that were not found or not read, for the progress output. */
  missing: string[];
}

/** Every file `configText` (the config at `configPath`) refers to, and the files those refer to. */
export async function referencedFiles(configPath: string, configText: string): Promise<ReferencedFiles> {
  const base = dirname(configPath);
  const files: Record<string, string> = {};
  const missing: string[] = [];
  let bytes = 0;
  const queue = [configText];
  for (let text = queue.shift(); text !== undefined; text = queue.shift()) {
    for (const [, path] of text.matchAll(REF)) {
      if (!path || isCode(path) || isGlob(path)) continue;
      const key = keyOf(path);
      if (Object.hasOwn(files, key) || missing.includes(key)) continue;
      const full = resolve(base, key);
      const size = await stat(full).then(
        (s) => (s.isFile() ? s.size : -1),
        () => -1,
      );
      if (size < 0 || bytes + size > MAX_BYTES || Object.keys(files).length >= MAX_FILES) {
        missing.push(key);
        continue;
      }
      const content = await readFile(full, "utf8");
      bytes += size;
      files[key] = content;
      queue.push(content);
    }
  }
  return { files, missing };
}
