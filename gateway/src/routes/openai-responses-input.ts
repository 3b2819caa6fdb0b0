/**
 * The Responses API's `instructions` and `input` as a Kiln run's caller messages
 * (docs/openai-compatible.md "Responses API"): a string is one user message; items are messages
 * (user, assistant, system, developer; text parts), `function_call` items (the calls a run
 * answered, sent back: they join the assistant message before them) and `function_call_output`
 * items (tool messages). Whatever Kiln cannot honour is a 400 naming the item's field. The same
 * message rules as Chat Completions apply (openai-chat-messages.ts `textOf`, the tool call's JSON).
 */
import { type RunMessage, textOf, toolCallArgumentsOf } from "./openai-chat-messages.js";
import { badRequest } from "./openai-errors.js";
import { given, isObject, type Loose } from "./openai-request-fields.js";

/** Where a run message came from: the input item (-1: `instructions`) and the item of each of its tool calls. */
export interface MessageSource {
  item: number;
  calls: number[];
}

export interface ResponsesInput {
  messages: RunMessage[];
  sources: MessageSource[];
}

/** Fields of an item by type, besides `type`, that Kiln reads (`id` and `status`: echoes of an earlier answer). */
const READ: Record<string, string[]> = {
  message: ["role", "content", "id", "status"],
  function_call: ["call_id", "name", "arguments", "id", "status"],
  function_call_output: ["call_id", "output", "id", "status"],
};

const ROLES = ["user", "assistant", "system", "developer"];

function checkFields(item: Loose, type: string, at: string): void {
  const read = READ[type] ?? [];
  for (const [key, value] of Object.entries(item)) {
    if (key === "type" || read.includes(key) || !given(value)) continue;
    throw badRequest(`a ${type} item's \`${key}\` is not supported`, `${at}.${key}`);
  }
}

function messageOf(item: Loose, at: string): RunMessage {
  const role = item.role;
  if (typeof role !== "string" || !ROLES.includes(role)) {
    throw badRequest('a message\'s role must be "user", "assistant", "system" or "developer"', `${at}.role`);
  }
  const parts = role === "assistant" ? ["output_text", "refusal"] : ["input_text"];
  return { role, content: textOf(item.content, at, parts, false) };
}

/** A function_call_output's `output`: text, or input_text parts. */
function outputOf(output: unknown, at: string): string {
  if (typeof output === "string") return output;
  if (!Array.isArray(output)) throw badRequest("a function_call_output's output must be text", `${at}.output`);
  return output
    .map((part: unknown, j) => {
      if (!isObject(part) || part.type !== "input_text" || typeof part.text !== "string") {
        throw badRequest("only input_text output parts are supported", `${at}.output[${j}]`);
      }
      return part.text;
    })
    .join("");
}

/** `instructions` (a system message after the prompt's own, none when empty) and `input`, in order, as the run's caller messages. */
export function responsesInputOf(instructions: unknown, input: unknown): ResponsesInput {
  const messages: RunMessage[] = [];
  const sources: MessageSource[] = [];
  if (given(instructions)) {
    if (typeof instructions !== "string") throw badRequest("instructions must be text", "instructions");
  }
  // Empty instructions (a stock client's default) are no system message.
  if (typeof instructions === "string" && instructions !== "") {
    messages.push({ role: "system", content: instructions });
    sources.push({ item: -1, calls: [] });
  }
  if (!given(input)) return { messages, sources };
  if (typeof input === "string") {
    messages.push({ role: "user", content: input });
    sources.push({ item: 0, calls: [] });
    return { messages, sources };
  }
  if (!Array.isArray(input)) throw badRequest("input must be a string or an array of items", "input");
  input.forEach((item: unknown, i) => {
    const at = `input[${i}]`;
    if (!isObject(item)) throw badRequest("an input item must be an object", at);
    // A message item may leave out its type (the easy input message: `{role, content}`).
    const type = item.type ?? (given(item.role) ? "message" : undefined);
    if (type === "item_reference") {
      throw badRequest(
        "item references are not supported: Kiln keeps no conversation state, send the items themselves (AI SDK: providerOptions.openai.store = false)",
        `${at}.type`,
      );
    }
    if (typeof type !== "string" || !(type in READ)) {
      throw badRequest(
        'an input item\'s type must be "message", "function_call" or "function_call_output"',
        `${at}.type`,
      );
    }
    checkFields(item, type, at);
    if (type === "message") {
      messages.push(messageOf(item, at));
      sources.push({ item: i, calls: [] });
      return;
    }
    if (typeof item.call_id !== "string" || item.call_id === "") {
      throw badRequest(`a ${type} item needs its call_id`, `${at}.call_id`);
    }
    if (type === "function_call_output") {
      messages.push({ role: "tool", content: outputOf(item.output, at), toolCallId: item.call_id });
      sources.push({ item: i, calls: [] });
      return;
    }
    if (typeof item.name !== "string" || item.name === "") {
      throw badRequest("a function_call item needs the function name", `${at}.name`);
    }
    const call = {
      id: item.call_id,
      name: item.name,
      arguments: toolCallArgumentsOf(item.arguments, `${at}.arguments`),
    };
    // A call joins the assistant message just before it (its text, or the calls before it).
    const last = messages.at(-1);
    const source = sources.at(-1);
    if (last?.role === "assistant" && source && source.item >= 0) {
      last.toolCalls = [...(last.toolCalls ?? []), call];
      source.calls.push(i);
    } else {
      messages.push({ role: "assistant", content: "", toolCalls: [call] });
      sources.push({ item: i, calls: [i] });
    }
  });
  return { messages, sources };
}
