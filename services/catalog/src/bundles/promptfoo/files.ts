/**
 * The files a promptfoo config refers to (`file://…`), sent with it by their path relative to the
 * config (docs/bundles.md "promptfoo"): the CLI reads them from disk. A file that was not sent is
 * reported for the one item that needs it, never a refusal of the whole config.
 */
import { posix } from "node:path";
import { parse as parseYaml } from "yaml";
import type { Json } from "./config.js";

/** The texts of the files given with the config, by their path relative to it. */
export type ConfigFiles = Readonly<Record<string, string>>;

export const isFileRef = (v: unknown): v is string => typeof v === "string" && v.startsWith("file://");

/** A path as a key of the files: `file://./a/../b.txt` → `b.txt` (absolute paths stay absolute). */
export function filePathOf(refOrPath: string): string {
  const path = refOrPath.replace(/^file:\/\//, "");
  const normal = posix.normalize(path.replace(/\\/g, "/"));
  return normal.startsWith("./") ? normal.slice(2) : normal;
}

/** Every file of the map, its key normalized as a reference's path is. */
export function normalizedFiles(files: ConfigFiles): ConfigFiles {
  return Object.fromEntries(Object.entries(files).map(([k, v]) => [filePathOf(k), v]));
}

/** The file's extension, lowercase, without the dot ("csv"); "" when it has none. */
export const extensionOf = (path: string) => /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? "";

/** A reference to code (`file://x.js`, `file://x.py:fn`), which Kiln does not run. */
export const isCodeRef = (ref: string) =>
  /\.(?:[cm]?[jt]s|py)(?::[\w.]+)?$/i.test(filePathOf(ref)) || /:[A-Za-z_]\w*$/.test(filePathOf(ref));

/** A glob (`file://prompts/*.txt`): the files are listed one by one instead. */
export const isGlob = (ref: string) => /[*?[\]{}]/.test(filePathOf(ref));

/**
 * The text of a referenced file, or undefined with a warning naming the file (and what is skipped).
 * `files` is normalized (normalizedFiles).
 */
export function readRef(
  ref: string,
  files: ConfigFiles,
  at: string,
  skipped: string,
  warnings: string[],
): string | undefined {
  if (isGlob(ref)) {
    warnings.push(`${at}: ${ref} is a glob, which is not expanded (list the files one by one); ${skipped}`);
    return undefined;
  }
  const text = files[filePathOf(ref)];
  if (text === undefined)
    warnings.push(`${at}: ${ref} was not given with the config (import from the CLI or send it in files); ${skipped}`);
  return text;
}

/** A structured file's value (YAML or JSON), or undefined with a warning when it does not parse. */
export function parseStructured(text: string, ref: string, at: string, warnings: string[]): Json | undefined {
  try {
    return parseYaml(text, { maxAliasCount: 100 }) as Json;
  } catch (e) {
    const why = e instanceof Error ? (e.message.split("\n")[0] ?? "does not parse") : "does not parse";
    warnings.push(`${at}: ${ref} does not parse (${why}); skipped`);
    return undefined;
  }
}

/** A variable's value from a file: its text, or a YAML file's value as JSON text (as promptfoo does). */
export function varFromFile(ref: string, text: string, at: string, warnings: string[]): Json | undefined {
  const ext = extensionOf(filePathOf(ref));
  if (ext !== "yaml" && ext !== "yml") return text;
  const value = parseStructured(text, ref, at, warnings);
  return value === undefined ? undefined : JSON.stringify(value);
}
