/**
 * Stage two of a run, render: a prompt version's templates filled with the variables, as the
 * messages the model is sent.
 */
import { renderPromptTemplate } from "@kiln/kit/templates";
import type { ChatMessage } from "@kiln/models/provider";
import type { RunnablePrompt } from "./runnable.js";

/** The system and developer messages rendered, then the caller's own messages. */
export function renderMessages(
  prompt: RunnablePrompt,
  variables: Record<string, unknown>,
  extraMessages: ChatMessage[] = [],
): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: "system", content: renderPromptTemplate(prompt.systemPrompt, variables) }];
  if (prompt.developerPrompt)
    messages.push({ role: "developer", content: renderPromptTemplate(prompt.developerPrompt, variables) });
  messages.push(...extraMessages);
  return messages;
}
