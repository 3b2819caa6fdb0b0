/** What to import: one file (a Kiln export or a promptfoo config), or a promptfoo config with its files (a directory or an archive). */
import type { Kiln } from "@kiln/sdk";
import type { ChangeEvent } from "react";
import type { ShownError } from "./api.js";
import { configOf, filesOfArchive, filesOfDirectory, promptfooBodyOf } from "./import-files.js";

export type ImportBody = Parameters<Kiln["bundles"]["import"]>[1];

export interface ImportSource {
  /** What was chosen, in words. */
  label: string;
  body: ImportBody;
  /** The files sent with a promptfoo config, by path. */
  files: string[];
  skipped: string[];
}

const fail = (message: string): ShownError => ({ message, fields: {} });

/** What a single chosen file is imported as: a bundle, or a promptfoo config (YAML, or JSON without a bundle's format). */
function bodyOfFile(name: string, text: string): ImportBody {
  if (/\.ya?ml$/i.test(name)) return { format: "promptfoo", config: text };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw fail(`${name} is neither JSON nor YAML (.yaml, .yml)`);
  }
  const value = parsed as { format?: unknown };
  if (value && typeof value === "object" && value.format === "kiln.bundle/v1") return parsed as ImportBody;
  return { format: "promptfoo", config: parsed as Record<string, unknown> };
}

async function withFiles(what: string, all: Map<string, Uint8Array>): Promise<ImportSource> {
  const picked = configOf(all);
  let body: ImportBody;
  try {
    body = promptfooBodyOf(picked);
  } catch {
    throw fail(`${picked.configPath} is not JSON`);
  }
  const files = Object.keys(picked.files);
  return {
    label: `${picked.configPath} from ${what}, with ${files.length} file${files.length === 1 ? "" : "s"}`,
    body,
    files,
    skipped: picked.skipped,
  };
}

export type SourceKind = "file" | "directory" | "archive";

/** The import source a file input's choice makes, or null when nothing was chosen. */
export async function sourceOf(kind: SourceKind, event: ChangeEvent<HTMLInputElement>): Promise<ImportSource | null> {
  const list = event.target.files;
  const first = list?.[0];
  if (!list || !first) return null;
  if (kind === "file")
    return { label: first.name, body: bodyOfFile(first.name, await first.text()), files: [], skipped: [] };
  if (kind === "archive") return withFiles(first.name, await filesOfArchive(first));
  const top = first.webkitRelativePath.split("/")[0] || "the directory";
  return withFiles(`${top}/`, await filesOfDirectory(list));
}

/** The three file inputs: one file, a directory, an archive; choosing in one clears the others. */
export function SourcePickers({
  onChoose: choose,
}: {
  onChoose: (kind: SourceKind, e: ChangeEvent<HTMLInputElement>) => void;
}) {
  const onChoose = (kind: SourceKind, e: ChangeEvent<HTMLInputElement>) => {
    for (const input of e.currentTarget.closest(".import-pickers")?.querySelectorAll("input") ?? []) {
      if (input !== e.currentTarget) input.value = "";
    }
    choose(kind, e);
  };
  return (
    <div className="import-pickers">
      <label className="field">
        A file (a Kiln export .json, or a promptfoo config .yaml, .yml, .json)
        <input
          type="file"
          accept=".json,.yaml,.yml,application/json,application/yaml"
          onChange={(e) => onChoose("file", e)}
        />
      </label>
      <label className="field">
        A directory holding a promptfoo config and its files
        <input
          type="file"
          ref={(el) => {
            if (el) el.webkitdirectory = true;
          }}
          onChange={(e) => onChoose("directory", e)}
        />
      </label>
      <label className="field">
        An archive of one (.zip, .tar.gz, .tgz, .tar)
        <input
          type="file"
          accept=".zip,.tar.gz,.tgz,.tar,application/zip,application/gzip,application/x-tar"
          onChange={(e) => onChoose("archive", e)}
        />
      </label>
    </div>
  );
}
