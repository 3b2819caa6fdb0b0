/**
 * Chat prompt versions (api.md "Prompts", "Chat prompts"): a version's template as a list of
 * messages, few-shot user/assistant turns and placeholders for the caller's conversation included.
 * A version made from `systemPrompt`/`developerPrompt` reads as the same list (messagesOfVersion),
 * so every reader (runs, diffs, bundles, MCP, the SDK) has one shape to follow.
 */
import { LIMITS } from "@kiln/kit/limits";
import { fieldPath, type Issues } from "./issues.js";
import type { JsonObject } from "./json-schema.js";
import { checkTemplate } from "./templates.js";

export const TEXT_ROLES = ["system", "developer", "user", "assistant"] as const;
export type TextRole = (typeof TEXT_ROLES)[number];

/** One message of a version's template: a text (a Mustache template) or a placeholder slot. */
export type TemplateMessage = { role: TextRole; content: string } | { role: "placeholder"; name: string };

/** A message as a request sends it: every field unchecked ("" where unset on the wire). */
export interface PromptMessageInput {
  role: string;
  content?: string;
  name?: string;
}

/** A placeholder's name: the identifier a run or the SDK fills it by. */
const PLACEHOLDER_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

const isText = (role: string): role is TextRole => (TEXT_ROLES as readonly string[]).includes(role);

/**
 * Checks a chat version's messages (templates against the variables schema when it is valid),
 * naming each problem by its index: `messages[2].role`.
 */
export function checkPromptMessages(
  issues: Issues,
  input: readonly PromptMessageInput[],
  schema: JsonObject | undefined,
): TemplateMessage[] {
  if (input.length === 0) issues.add("messages", "must hold at least one message");
  if (input.length > LIMITS.promptMessages) issues.add("messages", `must hold at most ${LIMITS.promptMessages}`);
  const names = new Set<string>();
  const out: TemplateMessage[] = [];
  input.forEach((m, i) => {
    const at = fieldPath("messages", i);
    if (m.role === "placeholder") {
      const name = m.name ?? "";
      if (!PLACEHOLDER_NAME.test(name)) {
        issues.add(fieldPath(at, "name"), "must be 1 to 64 letters, digits, _ or - (starting with a letter or _)");
      } else if (names.has(name)) issues.add(fieldPath(at, "name"), `repeats the placeholder "${name}"`);
      names.add(name);
      if (m.content) issues.add(fieldPath(at, "content"), "is not a field of a placeholder (it is filled at run time)");
      out.push({ role: "placeholder", name });
      return;
    }
    if (!isText(m.role)) {
      issues.add(fieldPath(at, "role"), "must be system, developer, user, assistant or placeholder");
      return;
    }
    if (m.name) issues.add(fieldPath(at, "name"), "is only a field of a placeholder");
    const content = issues.content(fieldPath(at, "content"), m.content ?? "");
    if (schema) checkTemplate(issues, fieldPath(at, "content"), content, schema);
    out.push({ role: m.role, content });
  });
  return out;
}

/** The messages a version reads as: its own, else built from its system and developer prompts. */
export function messagesOfVersion(v: {
  systemPrompt: string;
  developerPrompt: string | null;
  messages?: TemplateMessage[] | null;
}): TemplateMessage[] {
  if (v.messages && v.messages.length > 0) return v.messages;
  const built: TemplateMessage[] = [{ role: "system", content: v.systemPrompt }];
  if (v.developerPrompt) built.push({ role: "developer", content: v.developerPrompt });
  return built;
}

/**
 * The text a version stands for when another prompt includes it (api.md "Partials"): its text
 * messages' contents joined by a blank line (a text version: its system prompt, then its developer
 * prompt); placeholders add nothing.
 */
export function includedTextOf(v: Parameters<typeof messagesOfVersion>[0]): string {
  return messagesOfVersion(v)
    .flatMap((m) => (m.role === "placeholder" ? [] : [m.content]))
    .join("\n\n");
}
