/**
 * The Gemini generateContent request (REST, v1beta): a model request as its body. The wire types
 * are the `@google/genai` SDK's (types only; its own request type folds these fields into a
 * `config`, so the body's top level is declared here). docs/providers.md "Gemini" has the mapping.
 */
import type { Content, FunctionCallingConfigMode, GenerationConfig, Part, Tool, ToolConfig } from "@google/genai";
import { invalidArgument } from "@kiln/kit/errors";
import { toGeminiSchema } from "./gemini-schema.js";
import type { ChatMessage, ContentPart, ModelRequest, ToolChoice } from "./provider.js";

/** The body of `models/{model}:generateContent` and `:streamGenerateContent`. */
export interface GeminiRequestBody {
  contents: Content[];
  systemInstruction?: Content;
  tools?: Tool[];
  toolConfig?: ToolConfig;
  generationConfig?: GenerationConfig;
}

/** Ids Kiln made up for calls Gemini sent without one; they are not sent back to Gemini. */
export const MADE_UP_CALL_ID = "kiln-gc-";

/** Thinking budgets for `reasoning.effort` (Gemini 2.5 takes a budget, not an effort). */
const EFFORT_BUDGET = { low: 1024, medium: 8192, high: 24576 } as const;

/** Where Gemini's Files API serves uploads: the only https images Gemini reads by URI. */
const FILES_API = /^https:\/\/generativelanguage\.googleapis\.com\/(v1beta|v1)\/files\//;

/**
 * The request body. `signatureOf` gives the thought signature Gemini sent with a call (sent back
 * with it, as Gemini asks of thinking models). Throws invalid_argument for what Gemini cannot take:
 * an image URL it does not fetch, a tool result that answers no call of the conversation.
 */
export function toGeminiBody(
  request: ModelRequest,
  signatureOf: (callId: string) => string | undefined,
): GeminiRequestBody {
  const system: Part[] = [];
  const contents: Content[] = [];
  const callNames = new Map<string, string>();
  const push = (role: "user" | "model", parts: Part[]) => {
    const last = contents.at(-1);
    if (last && last.role === role) last.parts?.push(...parts);
    else contents.push({ role, parts });
  };
  for (const message of request.messages) {
    if (message.role === "system" || message.role === "developer") system.push({ text: message.content });
    else if (message.role === "user") push("user", userParts(message));
    else if (message.role === "assistant") {
      const parts: Part[] = message.content === "" ? [] : [{ text: message.content }];
      for (const call of message.toolCalls ?? []) {
        callNames.set(call.id, call.name);
        const signature = signatureOf(call.id);
        parts.push({
          functionCall: { name: call.name, args: argsOf(call.input), ...sentId(call.id) },
          ...(signature ? { thoughtSignature: signature } : {}),
        });
      }
      // An empty assistant turn is left out: Gemini refuses a content without parts.
      if (parts.length > 0) push("model", parts);
    } else {
      const name = callNames.get(message.toolCallId);
      if (name === undefined) {
        throw invalidArgument(
          `a tool result answers "${message.toolCallId}", which no earlier tool call of the conversation made`,
        );
      }
      push("user", [
        { functionResponse: { name, response: responseOf(message.content), ...sentId(message.toolCallId) } },
      ]);
    }
  }
  // Gemini needs a content: a conversation of instructions alone sends them as the user's turn.
  if (contents.length === 0) return { contents: [{ role: "user", parts: system }], ...settingsOf(request) };
  return { contents, ...(system.length > 0 ? { systemInstruction: { parts: system } } : {}), ...settingsOf(request) };
}

/** Tools, the calling mode and the generation config. */
function settingsOf(request: ModelRequest): Omit<GeminiRequestBody, "contents" | "systemInstruction"> {
  const body: Omit<GeminiRequestBody, "contents" | "systemInstruction"> = {};
  if (request.tools && request.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((t) => ({
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          parametersJsonSchema: toGeminiSchema(t.inputSchema),
        })),
      },
    ];
    if (request.toolChoice !== undefined)
      body.toolConfig = { functionCallingConfig: callingConfig(request.toolChoice) };
  }
  const config = generationConfig(request);
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return body;
}

function generationConfig(request: ModelRequest): GenerationConfig {
  const config: GenerationConfig = {};
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.maxOutputTokens !== undefined) config.maxOutputTokens = request.maxOutputTokens;
  if (request.stop && request.stop.length > 0) config.stopSequences = request.stop;
  if (request.seed !== undefined) config.seed = request.seed;
  if (request.presencePenalty !== undefined) config.presencePenalty = request.presencePenalty;
  if (request.frequencyPenalty !== undefined) config.frequencyPenalty = request.frequencyPenalty;
  const format = request.responseFormat;
  if (format?.type === "json_schema" || format?.type === "json_object") config.responseMimeType = "application/json";
  if (format?.type === "json_schema") config.responseJsonSchema = toGeminiSchema(format.schema);
  const { reasoning } = request;
  const budget = reasoning?.budgetTokens ?? (reasoning?.effort ? EFFORT_BUDGET[reasoning.effort] : undefined);
  if (budget !== undefined) config.thinkingConfig = { thinkingBudget: budget };
  return config;
}

function callingConfig(choice: ToolChoice): NonNullable<ToolConfig["functionCallingConfig"]> {
  const mode = (m: "AUTO" | "ANY" | "NONE") => m as FunctionCallingConfigMode;
  if (choice === "auto") return { mode: mode("AUTO") };
  if (choice === "none") return { mode: mode("NONE") };
  if (choice === "required") return { mode: mode("ANY") };
  return { mode: mode("ANY"), allowedFunctionNames: [choice.name] };
}

function userParts(message: Extract<ChatMessage, { role: "user" }>): Part[] {
  if (!message.parts) return [{ text: message.content }];
  return message.parts.map(toPart);
}

function toPart(part: ContentPart): Part {
  if (part.type === "text") return { text: part.text };
  const data = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s.exec(part.url);
  if (data) {
    const [, mimeType = "", params = "", payload = ""] = data;
    const base64 = params.split(";").includes("base64")
      ? payload
      : Buffer.from(decodeURIComponent(payload), "utf8").toString("base64");
    return { inlineData: { mimeType, data: base64 } };
  }
  if (FILES_API.test(part.url)) return { fileData: { fileUri: part.url } };
  throw invalidArgument(
    "Gemini takes images as data: URLs or Gemini Files API URIs, not other https URLs (Kiln does not fetch them)",
    [{ field: "messages", issue: "has an image URL Gemini does not read" }],
  );
}

/** Gemini's `args` is a JSON object; another input goes in as `{ input }`. */
function argsOf(input: unknown): Record<string, unknown> {
  return input !== null && typeof input === "object" && !Array.isArray(input)
    ? (input as Record<string, unknown>)
    : { input };
}

/** A function response is a JSON object: an object output as it is, anything else as `{ output }`. */
function responseOf(content: string): Record<string, unknown> {
  let value: unknown = content;
  try {
    value = JSON.parse(content);
  } catch {
    // Text output stays text.
  }
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : { output: value };
}

const sentId = (id: string) => (id.startsWith(MADE_UP_CALL_ID) ? {} : { id });
