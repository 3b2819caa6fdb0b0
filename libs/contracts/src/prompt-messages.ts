/**
 * What a prompt version's template is and where the caller's messages go (docs/api.md "Chat
 * prompts"), read alike by a run (services/execution/src/runs/render.ts) and by the SDK's `render`:
 * a chat version's messages, or a text version's system and developer prompts; a placeholder named
 * by a variable holding a conversation takes it, the first other placeholder takes the caller's
 * messages, which follow the template when no placeholder is left for them.
 */

/** A text message of a template or of a conversation. */
export interface TextMessage {
  role: "system" | "developer" | "user" | "assistant";
  content: string;
}

/** A version's template message: a text (Mustache) or a placeholder for a conversation. */
export type TemplateMessage = TextMessage | { role: "placeholder"; name: string };

const TEXT_ROLES: ReadonlySet<string> = new Set(["system", "developer", "user", "assistant"]);

/** The messages a version's template is: its own, else its system and developer prompts. */
export function templateOf<M extends TemplateMessage>(content: {
  systemPrompt: string;
  developerPrompt?: string | null;
  messages?: readonly M[];
}): readonly (M | TextMessage)[] {
  if (content.messages && content.messages.length > 0) return content.messages;
  const built: TextMessage[] = [{ role: "system", content: content.systemPrompt }];
  if (content.developerPrompt) built.push({ role: "developer", content: content.developerPrompt });
  return built;
}

/** A variable that holds a conversation ([{role, content}] of text roles), else undefined. */
function conversationOf(value: unknown): TextMessage[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const ok = value.every(
    (m) => typeof m === "object" && m !== null && TEXT_ROLES.has(m.role) && typeof m.content === "string",
  );
  return ok ? value.map((m) => ({ role: m.role, content: m.content })) : undefined;
}

/**
 * The filled template's messages in order with its placeholders filled: a placeholder whose name
 * is a variable holding a conversation takes it; the first other one takes `extra` (the caller's
 * messages), which follow the template when no placeholder is left for them.
 */
export function placeMessages<E>(
  filled: readonly TemplateMessage[],
  variables: Record<string, unknown>,
  extra: readonly E[],
): (TextMessage | E)[] {
  const messages: (TextMessage | E)[] = [];
  let placed = false;
  for (const m of filled) {
    if (m.role !== "placeholder") {
      messages.push(m);
      continue;
    }
    const named = conversationOf(variables[m.name]);
    if (named) messages.push(...named);
    else if (!placed) {
      messages.push(...extra);
      placed = true;
    }
  }
  if (!placed) messages.push(...extra);
  return messages;
}
