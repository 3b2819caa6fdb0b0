/**
 * Stage two of a run, render: a prompt version's template messages filled with the variables, and
 * its placeholder filled with the caller's messages, as the messages the model is sent (api.md
 * "Chat prompts").
 */
import { includeKey, includeOf } from "@kiln/contracts/partials";
import { type PartialLookup, renderPromptTemplate } from "@kiln/kit/templates";
import type { ChatMessage } from "@kiln/models/provider";
import type { RunnablePrompt, TemplateMessage } from "./runnable.js";

const TEXT_ROLES = new Set(["system", "developer", "user", "assistant"]);

/** A variable that holds a conversation ([{role, content}] of text roles), else undefined. */
function conversationOf(value: unknown): ChatMessage[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const ok = value.every(
    (m) => typeof m === "object" && m !== null && TEXT_ROLES.has(m.role) && typeof m.content === "string",
  );
  return ok ? value.map((m) => ({ role: m.role, content: m.content }) as ChatMessage) : undefined;
}

/** The messages a version's template is: its own, else its system and developer prompts. */
export function templateOf(prompt: Pick<RunnablePrompt, "systemPrompt" | "developerPrompt" | "messages">) {
  if (prompt.messages && prompt.messages.length > 0) return prompt.messages;
  const built: TemplateMessage[] = [{ role: "system", content: prompt.systemPrompt }];
  if (prompt.developerPrompt) built.push({ role: "developer", content: prompt.developerPrompt });
  return built;
}

/** What each `{{> name@label}}` of the version stands for, as the catalog resolved it (api.md "Partials"). */
function partialsOf(prompt: RunnablePrompt): PartialLookup | undefined {
  const { partials } = prompt;
  return partials ? (reference) => partials.get(includeKey(includeOf(reference))) : undefined;
}

/**
 * The template's messages rendered in order. A placeholder whose name is a variable holding a
 * conversation takes it; the first other placeholder takes the caller's messages, which follow the
 * template when no placeholder is left for them.
 */
export function renderMessages(
  prompt: RunnablePrompt,
  variables: Record<string, unknown>,
  extraMessages: ChatMessage[] = [],
): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const partials = partialsOf(prompt);
  let placed = false;
  for (const m of templateOf(prompt)) {
    if (m.role !== "placeholder") {
      messages.push({ role: m.role, content: renderPromptTemplate(m.content, variables, partials) });
      continue;
    }
    const named = conversationOf(variables[m.name]);
    if (named) messages.push(...named);
    else if (!placed) {
      messages.push(...extraMessages);
      placed = true;
    }
  }
  if (!placed) messages.push(...extraMessages);
  return messages;
}
