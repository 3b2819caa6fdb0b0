/**
 * The caller's JSON of a run (variables, input, inputs, messages) parsed and checked at the
 * boundary, with the field names api.md gives them.
 */
import { type FieldIssue, invalidArgument } from "@kiln/kit/errors";
import type { ChatMessage } from "../providers/provider.js";

/** JSON text of a stored document, or `fallback` for "". */
export const parseJson = (text: string | undefined, fallback: unknown): unknown => (text ? JSON.parse(text) : fallback);

/** A JSON object the caller sent as `field` ("" is {}); 400 naming the field otherwise. */
export function parseObject(text: string, field: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = text ? JSON.parse(text) : {};
  } catch {
    throw invalidArgument(`${field} is not valid JSON`, [{ field, issue: "must be a JSON object" }]);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalidArgument(`${field} must be an object`, [{ field, issue: "must be an object" }]);
  }
  return value as Record<string, unknown>;
}

/** RunPromptRequest.messages_json: user and assistant messages with text content; "" is none. */
export function parseMessages(text: string): ChatMessage[] {
  if (text === "") return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidArgument("messages is not valid JSON", [{ field: "messages", issue: "must be a JSON array" }]);
  }
  if (!Array.isArray(value))
    throw invalidArgument("messages must be an array", [{ field: "messages", issue: "must be an array" }]);
  return value.map((m: unknown, i): ChatMessage => {
    const { role, content } = (m ?? {}) as { role?: unknown; content?: unknown };
    if (role !== "user" && role !== "assistant") {
      throw invalidArgument("a message has an unsupported role", [
        { field: `messages[${i}].role`, issue: 'must be "user" or "assistant"' },
      ]);
    }
    if (typeof content !== "string") {
      throw invalidArgument("a message has no text content", [
        { field: `messages[${i}].content`, issue: "must be a string" },
      ]);
    }
    return { role, content };
  });
}

/** input-validator names fields from "input"; a run's values live under `prefix` ("variables", "inputs", …). */
export const renamed = (issues: FieldIssue[], prefix: string): FieldIssue[] =>
  issues.map((i) => ({ field: i.field.replace(/^input/, prefix), issue: i.issue }));
