/** The prompts of a promptfoo config: their text as Mustache, chat messages split into system and developer. */
import { parse as parseYaml } from "yaml";
import { isObject, type Json, type JsonObject, type PromptSource } from "./config.js";

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

/** `{{ name | filter }}` → `{{name}}` (Mustache has no filters); `{% … %}` blocks are reported. */
export function toMustache(template: string, at: string, warnings: string[]): string {
  if (/\{%/.test(template)) warnings.push(`${at}: Nunjucks tags ({% … %}) are not templates in Kiln and stay as text`);
  return template.replace(/\{\{\s*([^{}|]+?)\s*\|\s*([^{}]+?)\s*\}\}/g, (_m, name: string, filter: string) => {
    warnings.push(`${at}: the filter "${filter}" of {{${name}}} is dropped (Kiln templates are Mustache)`);
    return `{{${name}}}`;
  });
}

export function promptsOf(config: JsonObject, warnings: string[]): PromptSource[] {
  const raw = config.prompts;
  const list: { value: Json; label?: string; at: string }[] = [];
  if (typeof raw === "string") list.push({ value: raw, at: "prompts" });
  else if (Array.isArray(raw)) list.push(...raw.map((value, i) => ({ value, at: `prompts[${i}]` })));
  else if (isObject(raw))
    for (const [label, value] of Object.entries(raw)) list.push({ value, label, at: `prompts.${label}` });
  const out: PromptSource[] = [];
  for (const item of list) {
    let value = item.value;
    let label = item.label;
    if (isObject(value)) {
      label = typeof value.label === "string" ? value.label : typeof value.id === "string" ? value.id : label;
      value = value.raw ?? null;
    }
    if (typeof value !== "string") {
      warnings.push(`${item.at}: not a prompt text; skipped`);
      continue;
    }
    if (/^file:\/\//.test(value) || /^(?:python|javascript):/.test(value)) {
      warnings.push(`${item.at}: ${value} is not read (import the prompt's text, not a file or a function)`);
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
    out.push({
      label: (label ?? value.replace(/\s+/g, " ").trim()).slice(0, 80) || `prompt ${out.length + 1}`,
      system: toMustache(system, item.at, warnings),
      developer: developer === null ? null : toMustache(developer, item.at, warnings),
      at: item.at,
    });
  }
  return out;
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
