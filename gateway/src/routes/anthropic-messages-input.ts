/**
 * Anthropic Messages' `system` and `messages` as a Kiln run's caller messages
 * (docs/anthropic-compatible.md "Request"): `system` is a system message after the prompt's own;
 * a user message's `text` and `image` blocks are a user message (images as the run's image parts),
 * its `tool_result` blocks tool messages answering the calls before them; an assistant message's
 * `text` blocks its text and its `tool_use` blocks its calls (`thinking` blocks, echoes of an
 * earlier answer, are left out). Whatever Kiln cannot honour is a 400 naming the block.
 */
import { jsonText } from "@kiln/kit/json-text";
import { type RunMessage, textOf } from "./openai-chat-messages.js";
import { badRequest } from "./openai-errors.js";
import { given, isObject, type Loose } from "./openai-request-fields.js";

type Part = NonNullable<RunMessage["parts"]>[number];

/** Where a run message came from: the request's message (-1: `system`), and the block of each part, call or result. */
export interface BlockSource {
  message: number;
  /** The block of each of the run message's parts. */
  parts: number[];
  /** The block of each of its tool calls. */
  calls: number[];
  /** A tool message's tool_result block. */
  result?: number;
}

export interface MessagesInput {
  messages: RunMessage[];
  sources: BlockSource[];
}

/** Fields of a block by type, besides `type`, that Kiln reads (`cache_control`: a provider hint, left out). */
const READ: Record<string, string[]> = {
  text: ["text", "cache_control", "citations"],
  image: ["source", "cache_control"],
  tool_use: ["id", "name", "input", "cache_control"],
  tool_result: ["tool_use_id", "content", "is_error", "cache_control"],
  thinking: ["thinking", "signature"],
  redacted_thinking: ["data"],
};

/** The block types each role takes. */
const BLOCKS_OF: Record<string, string[]> = {
  system: ["text"],
  user: ["text", "image", "tool_result"],
  assistant: ["text", "tool_use", "thinking", "redacted_thinking"],
};

function checkBlock(block: unknown, role: string, at: string): Loose & { type: string } {
  if (!isObject(block) || typeof block.type !== "string") throw badRequest("a content block needs its type", at);
  const allowed = BLOCKS_OF[role] ?? [];
  if (!allowed.includes(block.type)) {
    throw badRequest(`a ${role} message takes ${allowed.join(", ")} blocks, not ${block.type}`, `${at}.type`);
  }
  const read = READ[block.type] ?? [];
  for (const [key, value] of Object.entries(block)) {
    if (key === "type" || read.includes(key) || !given(value)) continue;
    throw badRequest(`a ${block.type} block's \`${key}\` is not supported`, `${at}.${key}`);
  }
  return block as Loose & { type: string };
}

const textOfBlock = (block: Loose, at: string): string => {
  if (typeof block.text !== "string") throw badRequest("a text block needs its text", `${at}.text`);
  return block.text;
};

/** An image block's source as the URL the run's image part takes: an https URL, or base64 data as a data URL. */
function imageUrlOf(block: Loose, at: string): string {
  const source = block.source;
  if (isObject(source) && source.type === "url" && typeof source.url === "string") return source.url;
  if (
    isObject(source) &&
    source.type === "base64" &&
    typeof source.media_type === "string" &&
    typeof source.data === "string"
  ) {
    return `data:${source.media_type};base64,${source.data}`;
  }
  throw badRequest(
    'an image block\'s source must be {type: "base64", media_type, data} or {type: "url", url}',
    `${at}.source`,
  );
}

/** The `system` field: text or text blocks, one system message (none when empty). */
function systemOf(system: unknown): string {
  if (!given(system)) return "";
  if (typeof system === "string") return system;
  if (!Array.isArray(system)) throw badRequest("system must be text or an array of text blocks", "system");
  return system
    .map((block: unknown, j) => textOfBlock(checkBlock(block, "system", `system[${j}]`), `system[${j}]`))
    .join("");
}

/** A user message's blocks, in order: runs of text and images as user messages, each tool_result a tool message. */
function userMessagesOf(blocks: unknown[], i: number, into: MessagesInput): void {
  let parts: Part[] = [];
  let partBlocks: number[] = [];
  const flush = () => {
    if (partBlocks.length === 0) return;
    const text = parts.map((p) => (p.part?.case === "text" ? p.part.value : "")).join("");
    const withImages = parts.some((p) => p.part?.case === "image");
    into.messages.push({ role: "user", content: text, ...(withImages ? { parts } : {}) });
    into.sources.push({ message: i, parts: withImages ? partBlocks : [], calls: [] });
    parts = [];
    partBlocks = [];
  };
  blocks.forEach((raw, j) => {
    const at = `messages[${i}].content[${j}]`;
    const block = checkBlock(raw, "user", at);
    if (block.type === "tool_result") {
      flush();
      if (typeof block.tool_use_id !== "string" || block.tool_use_id === "") {
        throw badRequest("a tool_result block needs the tool_use_id it answers", `${at}.tool_use_id`);
      }
      if (given(block.is_error) && typeof block.is_error !== "boolean") {
        throw badRequest("is_error must be a boolean", `${at}.is_error`);
      }
      // Its content: text, or text blocks.
      const content = textOf(block.content, at, ["text"], true);
      into.messages.push({ role: "tool", content, toolCallId: block.tool_use_id });
      into.sources.push({ message: i, parts: [], calls: [], result: j });
      return;
    }
    const part: Part =
      block.type === "image"
        ? { part: { case: "image", value: { url: imageUrlOf(block, at), detail: "" } } }
        : { part: { case: "text", value: textOfBlock(block, at) } };
    parts.push(part);
    partBlocks.push(j);
  });
  flush();
}

/** An assistant message's blocks: its text and its calls, as one assistant message. */
function assistantMessageOf(blocks: unknown[], i: number, into: MessagesInput): void {
  let content = "";
  const toolCalls: { id: string; name: string; arguments: ReturnType<typeof jsonText> }[] = [];
  const calls: number[] = [];
  blocks.forEach((raw, j) => {
    const at = `messages[${i}].content[${j}]`;
    const block = checkBlock(raw, "assistant", at);
    if (block.type === "text") content += textOfBlock(block, at);
    if (block.type !== "tool_use") return;
    if (typeof block.id !== "string" || block.id === "") throw badRequest("a tool_use block needs its id", `${at}.id`);
    if (typeof block.name !== "string" || block.name === "") {
      throw badRequest("a tool_use block needs the tool's name", `${at}.name`);
    }
    if (given(block.input) && !isObject(block.input))
      throw badRequest("a tool_use's input must be an object", `${at}.input`);
    toolCalls.push({ id: block.id, name: block.name, arguments: jsonText(block.input ?? {}) });
    calls.push(j);
  });
  into.messages.push({ role: "assistant", content, toolCalls });
  into.sources.push({ message: i, parts: [], calls });
}

/** `system` and `messages`, in order, as the run's caller messages. */
export function messagesInputOf(system: unknown, messages: unknown): MessagesInput {
  const into: MessagesInput = { messages: [], sources: [] };
  const instructions = systemOf(system);
  if (instructions !== "") {
    into.messages.push({ role: "system", content: instructions });
    into.sources.push({ message: -1, parts: [], calls: [] });
  }
  if (!given(messages)) return into;
  if (!Array.isArray(messages)) throw badRequest("messages must be an array", "messages");
  messages.forEach((m: unknown, i) => {
    const at = `messages[${i}]`;
    if (!isObject(m)) throw badRequest("a message must be an object", at);
    for (const [key, value] of Object.entries(m)) {
      if (key !== "role" && key !== "content" && given(value)) {
        throw badRequest(`a message's \`${key}\` is not supported`, `${at}.${key}`);
      }
    }
    if (m.role !== "user" && m.role !== "assistant") {
      throw badRequest('a message\'s role must be "user" or "assistant" (system text goes in `system`)', `${at}.role`);
    }
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    if (!Array.isArray(blocks))
      throw badRequest("a message's content must be text or an array of blocks", `${at}.content`);
    if (m.role === "user") userMessagesOf(blocks, i, into);
    else assistantMessageOf(blocks, i, into);
  });
  return into;
}

/** The Messages request's name of a run-request message field (`messages[3].toolCallId` is `messages[2].content[1].tool_use_id`). */
export function messagesParamOf(field: string, sources: BlockSource[]): string | undefined {
  const m = field.match(/^messages\[(\d+)\](?:\.(parts|toolCalls)\[(\d+)\](.*)|\.(toolCallId)|(.*))$/);
  const source = m ? sources[Number(m[1])] : undefined;
  if (!m || !source) return undefined;
  if (source.message < 0) return "system";
  const at = `messages[${source.message}]`;
  if (m[2] === "parts")
    return `${at}.content[${source.parts[Number(m[3])] ?? 0}]${m[4]?.startsWith(".url") ? ".source" : ""}`;
  if (m[2] === "toolCalls")
    return `${at}.content[${source.calls[Number(m[3])] ?? 0}]${m[4] === ".arguments" ? ".input" : ""}`;
  if (m[5] || source.result !== undefined) return `${at}.content[${source.result ?? 0}]${m[5] ? ".tool_use_id" : ""}`;
  return at;
}
