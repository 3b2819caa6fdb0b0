/**
 * Stage two of a run, render: a prompt version's templates filled with the variables, as the
 * messages the model is sent.
 */
import { templateRenderer } from "@kiln/kit/templates";
import type { ChatMessage } from "../providers/provider.js";
import type { RunnablePrompt } from "./runnable.js";

/**
 * The variables as Mustache's view: objects without a prototype, so that a placeholder naming an
 * absent variable such as `{{constructor}}`, `{{toString}}` or `{{__proto__}}` renders nothing
 * instead of what Object.prototype holds (Mustache looks names up with `in` and calls functions).
 */
function viewOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(viewOf);
  if (value === null || typeof value !== "object") return value;
  const view = Object.create(null) as Record<string, unknown>;
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(view, key, { value: viewOf(item), enumerable: true, writable: true, configurable: true });
  }
  return view;
}

/** The parse of recent templates, bounded (Mustache's default cache keeps every template forever). */
const templates = templateRenderer();
const asText = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/** Mustache without HTML escaping (api.md "Prompts"); non-string values render as JSON. */
export function renderTemplate(template: string, variables: Record<string, unknown>): string {
  return templates.render(template, viewOf(variables), asText);
}

/** The system and developer messages rendered, then the caller's own messages. */
export function renderMessages(
  prompt: RunnablePrompt,
  variables: Record<string, unknown>,
  extraMessages: ChatMessage[] = [],
): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: "system", content: renderTemplate(prompt.systemPrompt, variables) }];
  if (prompt.developerPrompt)
    messages.push({ role: "developer", content: renderTemplate(prompt.developerPrompt, variables) });
  messages.push(...extraMessages);
  return messages;
}
