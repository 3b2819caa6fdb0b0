/**
 * The caller's JSON of a run (variables, input, inputs, messages) parsed and checked at the
 * boundary, with the field names api.md gives them.
 */
import { type FieldIssue, invalidArgument } from "@kiln/kit/errors";
import { type JsonText, readJsonText } from "@kiln/kit/json-text";
import type { ChatMessage, ContentPart } from "@kiln/models/provider";

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

/** A RunPromptRequest message as the proto carries it. */
export interface CallerMessage {
  role: string;
  content: string;
  toolCalls?: readonly { id: string; name: string; arguments?: JsonText }[];
  toolCallId?: string;
  parts?: readonly CallerPart[];
}

/** A ChatContentPart as the proto carries it. */
export interface CallerPart {
  part:
    | { case: "text"; value: string }
    | { case: "image"; value: { url: string; detail: string } }
    | { case: undefined; value?: undefined };
}

const DETAILS = new Set(["auto", "low", "high"]);
const IMAGE_URL = /^(https:\/\/\S+|data:image\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=]+)$/i;

/** A user message's parts: text, and images as an https or a data:image URL; 400 naming the part. */
function partsOf(parts: readonly CallerPart[], at: string): ContentPart[] {
  return parts.map(({ part }, j): ContentPart => {
    const field = `${at}.parts[${j}]`;
    if (part.case === "text") return { type: "text", text: part.value };
    if (part.case !== "image")
      throw invalidArgument("a content part is empty", [{ field, issue: "needs text or an image" }]);
    const { url, detail } = part.value;
    if (!IMAGE_URL.test(url)) {
      throw invalidArgument("an image part needs an https URL or a base64 data:image URL", [
        { field: `${field}.url`, issue: "must be an https URL or a base64 data:image URL" },
      ]);
    }
    if (detail !== "" && !DETAILS.has(detail)) {
      throw invalidArgument("an image part's detail is auto, low or high", [
        { field: `${field}.detail`, issue: 'must be "auto", "low" or "high"' },
      ]);
    }
    return { type: "image", url, ...(detail ? { detail: detail as "auto" | "low" | "high" } : {}) };
  });
}

/** The field of the first image part of the messages (`messages[i].parts[j]`), if any. */
export function firstImageOf(messages: readonly ChatMessage[]): string | undefined {
  for (const [i, m] of messages.entries()) {
    if (m.role !== "user" || !m.parts) continue;
    const j = m.parts.findIndex((p) => p.type === "image");
    if (j >= 0) return `messages[${i}].parts[${j}]`;
  }
  return undefined;
}

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

/**
 * RunPromptRequest.messages: system, developer, user, assistant (with the tool calls a run
 * answered) and tool messages (each answering a call of an earlier assistant message); 400 naming
 * the field otherwise.
 */
export function parseMessages(messages: readonly CallerMessage[]): ChatMessage[] {
  const calls = new Set<string>();
  return messages.map((m, i): ChatMessage => {
    const at = `messages[${i}]`;
    if (!ROLES.has(m.role)) {
      throw invalidArgument("a message has an unsupported role", [
        { field: `${at}.role`, issue: 'must be "system", "developer", "user", "assistant" or "tool"' },
      ]);
    }
    const toolCalls = m.toolCalls ?? [];
    if (toolCalls.length > 0 && m.role !== "assistant") {
      throw invalidArgument("only assistant messages carry tool calls", [
        { field: `${at}.toolCalls`, issue: "is only for assistant messages" },
      ]);
    }
    const parts = m.parts ?? [];
    if (parts.length > 0 && m.role !== "user") {
      throw invalidArgument("only user messages carry content parts", [
        { field: `${at}.parts`, issue: "is only for user messages" },
      ]);
    }
    switch (m.role) {
      case "user":
        if (parts.length === 0) return { role: "user", content: m.content };
        return { role: "user", content: m.content, parts: partsOf(parts, at) };
      case "assistant": {
        if (toolCalls.length === 0) return { role: "assistant", content: m.content };
        return {
          role: "assistant",
          content: m.content,
          toolCalls: toolCalls.map((c, j) => {
            if (c.id === "" || c.name === "") {
              throw invalidArgument("a tool call needs an id and a name", [
                { field: `${at}.toolCalls[${j}]`, issue: "needs an id and a name" },
              ]);
            }
            calls.add(c.id);
            return { id: c.id, name: c.name, input: parseObject(c.arguments, `${at}.toolCalls[${j}].arguments`) };
          }),
        };
      }
      case "tool": {
        const id = m.toolCallId ?? "";
        if (!calls.has(id)) {
          throw invalidArgument("a tool message answers no earlier tool call", [
            { field: `${at}.toolCallId`, issue: "names no tool call of an earlier assistant message" },
          ]);
        }
        return { role: "tool", toolCallId: id, content: m.content };
      }
      default:
        return { role: m.role as "system" | "developer", content: m.content };
    }
  });
}

/** input-validator names fields from "input"; a run's values live under `prefix` ("variables", "inputs", …). */
export const renamed = (issues: FieldIssue[], prefix: string): FieldIssue[] =>
  issues.map((i) => ({ field: i.field.replace(/^input/, prefix), issue: i.issue }));

/** An input problem of load-inputs (api.md: `validation.errors`). */
export interface InputIssue {
  path: string;
  code: string;
  message: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The code of a load-inputs problem, from its field issue. */
export const inputIssueCode = (issue: string) =>
  issue === "is required" ? "required" : issue === "is not allowed" ? "not_allowed" : "invalid_value";

/** An agent run's recorded inputs. */
export const inputsOf = (run: { inputJson: string }): Record<string, unknown> => {
  const input = JSON.parse(run.inputJson) as { inputs?: unknown };
  return isObject(input.inputs) ? input.inputs : {};
};
