/**
 * A promptfoo config with the files it refers to, from a chosen directory or an archive (.zip,
 * .tar.gz, .tgz, .tar), as the import body's `files` map: every text file under the config's
 * directory by its path relative to the config (docs/bundles.md "promptfoo"; the CLI reads the same
 * files from disk: launcher/src/promptfoo-files.ts).
 */

/** The import body's limit is 8 MiB: files beyond it are left out (and named). */
const MAX_BYTES = 8 * 1_048_576;
const MAX_FILES = 500;
const CONFIG_NAMES = ["promptfooconfig.yaml", "promptfooconfig.yml", "promptfooconfig.json"];
const IGNORED = /(^|\/)(node_modules|\.git|__pycache__)\//;

export interface PickedConfig {
  /** The config's path in what was chosen. */
  configPath: string;
  config: string;
  files: Record<string, string>;
  /** Paths left out: not text, or over the limits. */
  skipped: string[];
}

const strict = new TextDecoder("utf-8", { fatal: true });

function textOf(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return strict.decode(bytes);
  } catch {
    return null;
  }
}

/** Entries of a tar archive (ustar and GNU long names): regular files only. */
function untar(tar: Uint8Array): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  const ascii = (from: number, length: number) =>
    new TextDecoder().decode(tar.subarray(from, from + length)).replace(/\0.*$/s, "");
  let longName: string | null = null;
  for (let at = 0; at + 512 <= tar.length; ) {
    const name = ascii(at, 100);
    if (name === "") break;
    const size = Number.parseInt(ascii(at + 124, 12).trim() || "0", 8);
    const type = ascii(at + 156, 1) || "0";
    const prefix = ascii(at + 345, 155);
    const body = tar.subarray(at + 512, at + 512 + size);
    if (type === "L") longName = new TextDecoder().decode(body).replace(/\0.*$/s, "");
    else {
      if (type === "0" || type === "7") out.set(longName ?? (prefix ? `${prefix}/${name}` : name), body);
      longName = null;
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

/** The files of an archive by path. */
export async function filesOfArchive(file: File): Promise<Map<string, Uint8Array>> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const { gunzipSync, unzipSync } = await import("fflate");
  if (/\.zip$/i.test(file.name)) return new Map(Object.entries(unzipSync(bytes)).filter(([p]) => !p.endsWith("/")));
  if (/\.(tar\.gz|tgz)$/i.test(file.name)) return untar(gunzipSync(bytes));
  if (/\.tar$/i.test(file.name)) return untar(bytes);
  throw { message: `${file.name}: choose a .zip, .tar.gz, .tgz or .tar archive`, fields: {} };
}

/** The files of a directory chosen with `webkitdirectory`, by their path inside it. */
export async function filesOfDirectory(list: FileList): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  for (const f of Array.from(list)) {
    const path = f.webkitRelativePath || f.name;
    if (!IGNORED.test(path) && f.size <= MAX_BYTES) out.set(path, new Uint8Array(await f.arrayBuffer()));
  }
  return out;
}

const depth = (path: string) => path.split("/").length;

/** The config (a promptfooconfig.* nearest the top, else the only YAML there) and the text files beside and below it. */
export function configOf(all: Map<string, Uint8Array>): PickedConfig {
  const paths = [...all.keys()]
    .filter((p) => !IGNORED.test(p))
    .sort((a, b) => depth(a) - depth(b) || a.localeCompare(b));
  const base = (p: string) => p.slice(p.lastIndexOf("/") + 1);
  let configPath = paths.find((p) => CONFIG_NAMES.includes(base(p)));
  if (!configPath) {
    const top = paths.filter((p) => /\.ya?ml$/i.test(p));
    const shallowest = top.filter((p) => depth(p) === depth(top[0] ?? ""));
    if (shallowest.length === 1) configPath = shallowest[0];
  }
  if (!configPath) {
    throw {
      message:
        "No promptfoo config found: name it promptfooconfig.yaml (or .yml, .json), or keep one YAML file at the top",
      fields: {},
    };
  }
  const config = textOf(all.get(configPath) ?? new Uint8Array());
  if (config === null) throw { message: `${configPath} is not UTF-8 text`, fields: {} };
  const dir = configPath.includes("/") ? configPath.slice(0, configPath.lastIndexOf("/") + 1) : "";
  const files: Record<string, string> = {};
  const skipped: string[] = [];
  let bytes = config.length;
  for (const path of paths) {
    if (path === configPath || !path.startsWith(dir)) continue;
    const text = textOf(all.get(path) ?? new Uint8Array());
    const key = path.slice(dir.length);
    if (text === null || bytes + text.length > MAX_BYTES || Object.keys(files).length >= MAX_FILES) {
      skipped.push(key);
      continue;
    }
    bytes += text.length;
    files[key] = text;
  }
  return { configPath, config, files, skipped };
}

/** The import body: the config as text (YAML or JSON) and its files. */
export function promptfooBodyOf(picked: PickedConfig) {
  const config: string | Record<string, unknown> = /\.json$/i.test(picked.configPath)
    ? (JSON.parse(picked.config) as Record<string, unknown>)
    : picked.config;
  return { format: "promptfoo" as const, config, files: picked.files };
}

/** The report's warnings grouped by the item they name (`tests[1]`, `tests.yaml[0]`, `more-tests.jsonl:2`, `defaultTest`), in order. */
export function warningsByPlace(warnings: string[]): [string, string[]][] {
  const groups = new Map<string, string[]>();
  for (const w of warnings) {
    const place = /^([\w.-]+?(?:\[\d+\]|:\d+)|[A-Za-z]+)/.exec(w)?.[1] ?? "config";
    groups.set(place, [...(groups.get(place) ?? []), w]);
  }
  return [...groups];
}
