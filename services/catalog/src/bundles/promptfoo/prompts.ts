/** The prompts of a promptfoo config: their text as Mustache, chat messages split into system and developer. */
import { parse as parseYaml } from "yaml";
import { isObject, type Json, type JsonObject, type PromptSource } from "./config.js";
import { type ConfigFiles, extensionOf, filePathOf, isCodeRef, isFileRef, parseStructured, readRef } from "./files.js";
import { toMustache } from "./nunjucks.js";
import { responseFormatOf } from "./providers.js";

/**
 * A bare path (`prompts.txt`, `prompts/chat.json`): promptfoo reads a prompt that names a file
 * with a prompt's extension as that file, as it reads `file://prompts.txt`.
 */
const BARE_PATH = /^(?!file:\/\/)[\w./-]+\.(?:txt|md|j2|njk|nunjucks|json|yaml|yml)$/i;
const asRef = (v: Json): Json => (typeof v === "string" && BARE_PATH.test(v) ? `file://${v}` : v);

/** A label name from free text: lowercase letters, digits and dashes, starting with a letter. */
export function labelOf(text: string, taken: Set<string>): string {
  let base = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^[^a-z]+/, "")
    .replace(/-+$/, "")
    .slice(0, 36);
  if (base === "" || base === "draft" || base === "published" || base === "production" || base === "latest")
    base = `provider-${base}`.replace(/-$/, "");
  let label = base;
  for (let n = 2; taken.has(label); n++) label = `${base}-${n}`;
  taken.add(label);
  return label;
}

type PromptItem = { value: Json; label?: string; config?: JsonObject; at: string };

/**
 * The prompts a `file://` reference holds, as promptfoo reads them: a text file's prompts
 * separated by `---` lines, a JSON or YAML file's chat messages; none (reported) when the file
 * was not given or is code.
 */
function promptsOfFile(ref: string, item: PromptItem, files: ConfigFiles, warnings: string[]): PromptItem[] {
  if (isCodeRef(ref)) {
    warnings.push(`${item.at}: ${ref} is a prompt function, which Kiln does not run; skipped`);
    return [];
  }
  const text = readRef(ref, files, item.at, "the prompt is skipped", warnings);
  if (text === undefined) return [];
  const path = filePathOf(ref);
  const ext = extensionOf(path);
  if (ext === "json" || ext === "yaml" || ext === "yml") {
    const value = parseStructured(text, ref, item.at, warnings);
    if (value === undefined) return [];
    return [
      { value: typeof value === "string" ? value : JSON.stringify(value), label: item.label ?? path, at: item.at },
    ];
  }
  const parts = text
    .split(/\r?\n---\r?\n/)
    .map((t) => t.trim())
    .filter((t) => t !== "");
  return parts.map((value, k) => ({
    value,
    label: parts.length > 1 ? `${item.label ?? path} (${k + 1})` : (item.label ?? path),
    at: parts.length > 1 ? `${item.at} (${path} prompt ${k + 1})` : item.at,
  }));
}

export function promptsOf(config: JsonObject, files: ConfigFiles, warnings: string[]): PromptSource[] {
  const raw = config.prompts;
  const given: PromptItem[] = [];
  if (typeof raw === "string") given.push({ value: asRef(raw), at: "prompts" });
  else if (Array.isArray(raw)) given.push(...raw.map((value, i) => ({ value: asRef(value), at: `prompts[${i}]` })));
  else if (isObject(raw))
    for (const [key, value] of Object.entries(raw)) {
      // promptfoo's map form: a file reference → its label.
      if ((isFileRef(key) || BARE_PATH.test(key)) && typeof value === "string")
        given.push({ value: asRef(key), label: value, at: `prompts.${key}` });
      else given.push({ value, label: key, at: `prompts.${key}` });
    }
  const list = given.flatMap((item): PromptItem[] => {
    let { value, label } = item;
    let config: JsonObject | undefined;
    if (isObject(value)) {
      config = isObject(value.config) ? value.config : undefined;
      label =
        typeof value.label === "string"
          ? value.label
          : typeof value.id === "string" && !isFileRef(value.id)
            ? value.id
            : label;
      value = asRef(value.raw ?? (isObject(item.value) && isFileRef(item.value.id) ? item.value.id : null));
    }
    const read = isFileRef(value)
      ? promptsOfFile(value, { ...item, label }, files, warnings)
      : [{ ...item, value, label }];
    return read.map((r) => ({ ...r, ...(config ? { config } : {}) }));
  });
  const out: PromptSource[] = [];
  const seen = new Map<string, string>();
  for (const item of list) {
    const { value, label } = item;
    if (typeof value !== "string") {
      warnings.push(`${item.at}: not a prompt text; skipped`);
      continue;
    }
    if (/^(?:python|javascript):/.test(value)) {
      warnings.push(`${item.at}: ${value} is a prompt function, which Kiln does not run; skipped`);
      continue;
    }
    const messages = chatMessagesOf(value);
    let system: string;
    let developer: string | null = null;
    if (messages) {
      system = messages
        .filter((m) => m.role === "system")
        .map((m) => m.content)
        .join("\n\n");
      const rest = messages.filter((m) => m.role !== "system");
      if (rest.some((m) => m.role === "assistant"))
        warnings.push(`${item.at}: assistant turns become part of the developer prompt`);
      developer = rest.length > 0 ? rest.map((m) => m.content).join("\n\n") : null;
      if (system === "") {
        system = developer ?? "";
        developer = null;
      }
    } else system = value;
    // One Kiln prompt per text: a second prompt with the same text would be the same prompt.
    const same = seen.get(JSON.stringify([system, developer]));
    if (same !== undefined) {
      warnings.push(`${item.at}: the same text as ${same}; imported once`);
      continue;
    }
    seen.set(JSON.stringify([system, developer]), item.at);
    const responseFormat = promptConfigOf(item.config, item.at, warnings);
    out.push({
      label: (label ?? value.replace(/\s+/g, " ").trim()).slice(0, 80) || `prompt ${out.length + 1}`,
      system: toMustache(system, item.at, warnings),
      developer: developer === null ? null : toMustache(developer, item.at, warnings),
      ...(responseFormat ? { responseFormat } : {}),
      at: item.at,
    });
  }
  return out;
}

/** A prompt's own `config`: its response format is kept; every other key is reported by name. */
function promptConfigOf(config: JsonObject | undefined, at: string, warnings: string[]): JsonObject | undefined {
  if (!config) return undefined;
  for (const key of Object.keys(config)) {
    if (key !== "response_format") warnings.push(`${at}: config.${key} is not imported (only its response_format is)`);
  }
  return responseFormatOf(config.response_format, at, warnings);
}

/** A JSON array of `{role, content}` given as the prompt's text (promptfoo's chat format). */
export function chatMessagesOf(text: string): { role: string; content: string }[] | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith("[")) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    try {
      parsed = parseYaml(trimmed);
    } catch {
      return undefined;
    }
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return undefined;
  const messages = parsed.map((m) =>
    isObject(m) && typeof m.role === "string" && typeof m.content === "string"
      ? { role: m.role, content: m.content }
      : null,
  );
  return messages.every((m) => m !== null) ? (messages as { role: string; content: string }[]) : undefined;
}
