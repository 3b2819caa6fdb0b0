/**
 * The caller's JSON of a run (variables, input, inputs, messages) parsed and checked at the
 * boundary, with the field names api.md gives them.
 */
import { type FieldIssue, invalidArgument } from "@kiln/kit/errors";
import { type JsonText, readJsonText } from "@kiln/kit/json-text";
import type { ChatMessage } from "../providers/provider.js";

/** JSON text of a stored document, or `fallback` for "". */
export const parseJson = (text: string | undefined, fallback: unknown): unknown => (text ? JSON.parse(text) : fallback);

/** A JSON object the caller sent as `field` (unset is {}); 400 naming the field otherwise. */
export function parseObject(text: JsonText | undefined, field: string): Record<string, unknown> {
  const read = readJsonText(text);
  if (!read.ok) {
    throw invalidArgument(`${field} ${read.issue}`, [
      { field, issue: read.issue === "is not valid JSON" ? "must be a JSON object" : read.issue },
    ]);
  }
  const value = read.value ?? {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalidArgument(`${field} must be an object`, [{ field, issue: "must be an object" }]);
  }
  return value as Record<string, unknown>;
}

/** RunPromptRequest.messages: user and assistant messages with text content; 400 on another role. */
export function parseMessages(messages: readonly { role: string; content: string }[]): ChatMessage[] {
  return messages.map(({ role, content }, i): ChatMessage => {
    if (role !== "user" && role !== "assistant") {
      throw invalidArgument("a message has an unsupported role", [
        { field: `messages[${i}].role`, issue: 'must be "user" or "assistant"' },
      ]);
    }
    return { role, content };
  });
}

/** input-validator names fields from "input"; a run's values live under `prefix` ("variables", "inputs", …). */
export const renamed = (issues: FieldIssue[], prefix: string): FieldIssue[] =>
  issues.map((i) => ({ field: i.field.replace(/^input/, prefix), issue: i.issue }));
