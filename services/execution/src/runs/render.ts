/**
 * Stage two of a run, render: a prompt version's template messages filled with the variables, and
 * its placeholder filled with the caller's messages, as the messages the model is sent (api.md
 * "Chat prompts"). What the template is, where the messages go and how a template is filled are
 * @kiln/contracts' (prompt-messages.ts, prompt-template.ts): the SDK's `render` does the same.
 */
import { partialLookupOf } from "@kiln/contracts/partials";
import { placeMessages, templateOf } from "@kiln/contracts/prompt-messages";
import { renderPromptTemplate } from "@kiln/kit/templates";
import type { ChatMessage } from "@kiln/models/provider";
import type { RunnablePrompt } from "./runnable.js";

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
  const partials = prompt.partials ? partialLookupOf(prompt.partials) : undefined;
  const filled = templateOf(prompt).map((m) =>
    m.role === "placeholder" ? m : { role: m.role, content: renderPromptTemplate(m.content, variables, partials) },
  );
  return placeMessages(filled, variables, extraMessages);
}
