/**
 * Chat Completions `messages` as a Kiln run's caller messages (docs/openai-compatible.md
 * "Request"): system, developer, user, assistant (with the tool calls a run answered) and tool
 * messages; text content, and `image_url` parts in user messages (for a model that takes images, which
 * execution checks). Whatever a message carries that Kiln cannot honour is a 400 naming it.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { jsonText } from "@kiln/kit/json-text";
import type { ChatMessageSchema } from "@kiln/proto/execution";
import { badRequest } from "./openai-errors.js";

export type RunMessage = MessageInitShape<typeof ChatMessageSchema>;

type Loose = Record<string, unknown>;

const isObject = (v: unknown): v is Loose => typeof v === "object" && v !== null && !Array.isArray(v);
const given = (v: unknown) => v !== undefined && v !== null;

/** Fields of a message by role, besides `role` and `content`, that Kiln reads. */
const READ: Record<string, string[]> = {
  system: [],
  developer: [],
  user: [],
  assistant: ["tool_calls", "refusal"],
  // LangChain's ToolMessage sends the tool's name: the call it answers names it already.
  tool: ["tool_call_id", "name"],
};

/** Media parts other than a user message's images (Chat Completions' and Responses' names): refused, Kiln runs take text. */
const MEDIA_PARTS = new Set(["input_audio", "file", "input_image", "input_file"]);

type Part = NonNullable<RunMessage["parts"]>[number];

/** A user message's content with its image parts: the text parts joined, and every part in order. */
function userContentOf(content: unknown, at: string): { content: string; parts?: Part[] } {
  if (!Array.isArray(content) || !content.some((part) => isObject(part) && part.type === "image_url")) {
    return { content: textOf(content, at, ["text"], false) };
  }
  const parts = content.map((part: unknown, j): Part => {
    if (!isObject(part) || part.type !== "image_url") {
      return { part: { case: "text", value: textOf([part], at, ["text"], false, j) } };
    }
    const image = part.image_url;
    if (!isObject(image) || typeof image.url !== "string") {
      throw badRequest("an image_url part needs image_url.url", `${at}.content[${j}].image_url.url`);
    }
    if (given(image.detail) && typeof image.detail !== "string") {
      throw badRequest('image_url.detail must be "auto", "low" or "high"', `${at}.content[${j}].image_url.detail`);
    }
    const detail = typeof image.detail === "string" ? image.detail : "";
    return { part: { case: "image", value: { url: image.url, detail } } };
  });
  const text = parts.map((p) => (p.part?.case === "text" ? p.part.value : "")).join("");
  return { content: text, parts };
}

/** A message's content as text: a string, or parts of the types `partTypes` (text, refusal). */
export function textOf(content: unknown, at: string, partTypes: string[], optional: boolean, firstIndex = 0): string {
  if (typeof content === "string") return content;
  if (!given(content) && optional) return "";
  if (!Array.isArray(content)) throw badRequest("a message needs text content", `${at}.content`);
  return content
    .map((part: unknown, k) => {
      const j = firstIndex + k;
      const type = isObject(part) ? part.type : undefined;
      if (type === "image_url") {
        throw badRequest("image_url content parts are only for user messages", `${at}.content[${j}]`);
      }
      if (typeof type === "string" && MEDIA_PARTS.has(type)) {
        throw badRequest(`${String(type)} content parts are not supported: send text`, `${at}.content[${j}]`);
      }
      if (!isObject(part) || typeof type !== "string" || !partTypes.includes(type)) {
        throw badRequest(`only ${partTypes.join(" and ")} content parts are supported`, `${at}.content[${j}]`);
      }
      const text = type === "refusal" ? part.refusal : part.text;
      if (typeof text !== "string") throw badRequest("a text part needs its text", `${at}.content[${j}]`);
      return text;
    })
    .join("");
}

/** A tool call's arguments (JSON text, empty for none) as the run takes them; a 400 at `at` when not JSON. */
export function toolCallArgumentsOf(args: unknown, at: string): ReturnType<typeof jsonText> {
  let input: unknown = {};
  try {
    if (typeof args === "string" && args.trim() !== "") input = JSON.parse(args);
  } catch {
    throw badRequest("a tool call's arguments must be JSON", at);
  }
  return jsonText(input);
}

function toolCallsOf(calls: unknown, at: string): RunMessage["toolCalls"] {
  if (!given(calls)) return [];
  if (!Array.isArray(calls)) throw badRequest("tool_calls must be an array", `${at}.tool_calls`);
  return calls.map((call: unknown, j) => {
    const where = `${at}.tool_calls[${j}]`;
    if (!isObject(call) || call.type !== "function" || !isObject(call.function)) {
      throw badRequest("only function tool calls are supported", `${where}.type`);
    }
    if (typeof call.id !== "string" || call.id === "") throw badRequest("a tool call needs its id", `${where}.id`);
    const { name, arguments: args } = call.function;
    if (typeof name !== "string" || name === "") {
      throw badRequest("a tool call needs its function name", `${where}.function.name`);
    }
    return { id: call.id, name, arguments: toolCallArgumentsOf(args, `${where}.function.arguments`) };
  });
}

/** The caller's messages, in order, as the run request carries them. */
export function runMessagesOf(messages: unknown): RunMessage[] {
  if (!Array.isArray(messages)) throw badRequest("messages must be an array", "messages");
  return messages.map((m: unknown, i): RunMessage => {
    const at = `messages[${i}]`;
    if (!isObject(m)) throw badRequest("a message must be an object", at);
    const role = m.role;
    const read = typeof role === "string" ? READ[role] : undefined;
    if (!read) {
      throw badRequest(
        'a message\'s role must be "system", "developer", "user", "assistant" or "tool" (legacy "function" messages are not supported)',
        `${at}.role`,
      );
    }
    for (const [key, value] of Object.entries(m)) {
      if (key === "role" || key === "content" || read.includes(key) || !given(value)) continue;
      throw badRequest(`a ${role} message's \`${key}\` is not supported`, `${at}.${key}`);
    }
    switch (role) {
      case "assistant": {
        if (given(m.refusal)) throw badRequest("an assistant message's `refusal` is not supported", `${at}.refusal`);
        const toolCalls = toolCallsOf(m.tool_calls, at);
        return { role, content: textOf(m.content, at, ["text", "refusal"], true), toolCalls };
      }
      case "tool":
        if (typeof m.tool_call_id !== "string") {
          throw badRequest("a tool message needs the tool_call_id it answers", `${at}.tool_call_id`);
        }
        if (given(m.name) && typeof m.name !== "string")
          throw badRequest("a tool message's name must be text", `${at}.name`);
        return { role, content: textOf(m.content, at, ["text"], false), toolCallId: m.tool_call_id };
      case "user":
        return { role, ...userContentOf(m.content, at) };
      default:
        return { role: role as string, content: textOf(m.content, at, ["text"], false) };
    }
  });
}
