/**
 * The Bedrock Converse request (`POST /model/{modelId}/converse` and `/converse-stream`): a model
 * request as its JSON body. The shapes are the `@aws-sdk/client-bedrock-runtime` types (types
 * only), except that JSON carries image bytes as base64 text. docs/providers.md "Bedrock" has the
 * mapping.
 */
import type {
  ContentBlock,
  InferenceConfiguration,
  Message,
  OutputConfig,
  SystemContentBlock,
  ToolConfiguration,
} from "@aws-sdk/client-bedrock-runtime";
import { invalidArgument } from "@kiln/kit/errors";
import type { ChatMessage, ContentPart, ModelRequest } from "./provider.js";

export interface ConverseBody {
  messages: Message[];
  system?: SystemContentBlock[];
  inferenceConfig?: InferenceConfiguration;
  toolConfig?: ToolConfiguration;
  outputConfig?: OutputConfig;
  additionalModelRequestFields?: Record<string, unknown>;
}

/** Thinking budgets for `reasoning.effort` on Anthropic models (which take a budget). */
const EFFORT_BUDGET = { low: 1024, medium: 8192, high: 24576 } as const;
const IMAGE_FORMATS = new Set(["png", "jpeg", "gif", "webp"]);
const CACHE_POINT = { cachePoint: { type: "default" } } as ContentBlock & SystemContentBlock;

export function toConverseBody(request: ModelRequest): ConverseBody {
  const system: SystemContentBlock[] = [];
  const messages: Message[] = [];
  let usesTools = false;
  const push = (role: "user" | "assistant", content: ContentBlock[]) => {
    const last = messages.at(-1);
    if (last && last.role === role) last.content?.push(...content);
    else messages.push({ role, content });
  };
  for (const message of request.messages) {
    if (message.role === "system" || message.role === "developer") {
      system.push({ text: message.content });
      if (message.role === "system" && message.cache) system.push(CACHE_POINT);
    } else if (message.role === "user") {
      push("user", [...userBlocks(message), ...(message.cache ? [CACHE_POINT] : [])]);
    } else if (message.role === "assistant") {
      const content: ContentBlock[] = message.content === "" ? [] : [{ text: message.content }];
      for (const call of message.toolCalls ?? []) {
        usesTools = true;
        content.push({ toolUse: { toolUseId: call.id, name: call.name, input: call.input as never } });
      }
      if (content.length > 0) push("assistant", content);
    } else {
      usesTools = true;
      push("user", [{ toolResult: { toolUseId: message.toolCallId, content: [resultBlock(message.content)] } }]);
    }
  }
  // Bedrock needs a message: a conversation of instructions alone sends them as the user's turn.
  if (messages.length === 0) messages.push({ role: "user", content: system.splice(0) as ContentBlock[] });
  const body: ConverseBody = { messages };
  if (system.length > 0) body.system = system;
  const tools = request.tools ?? [];
  // Converse has no "none": the tools go unoffered, unless the conversation holds tool blocks (which need them declared).
  if (tools.length > 0 && (request.toolChoice !== "none" || usesTools)) {
    body.toolConfig = {
      tools: tools.map((t) => ({
        toolSpec: {
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          inputSchema: { json: t.inputSchema as never },
        },
      })),
    };
    const choice = request.toolChoice;
    if (choice === "required") body.toolConfig.toolChoice = { any: {} };
    else if (typeof choice === "object") body.toolConfig.toolChoice = { tool: { name: choice.name } };
  }
  const inference: InferenceConfiguration = {};
  if (request.maxOutputTokens !== undefined) inference.maxTokens = request.maxOutputTokens;
  if (request.temperature !== undefined) inference.temperature = request.temperature;
  if (request.topP !== undefined) inference.topP = request.topP;
  if (request.stop && request.stop.length > 0) inference.stopSequences = request.stop;
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;
  const format = request.responseFormat;
  if (format?.type === "json_schema") {
    body.outputConfig = {
      textFormat: {
        type: "json_schema",
        structure: { jsonSchema: { schema: JSON.stringify(format.schema), name: schemaName(format.name) } },
      },
    };
  }
  const budget =
    request.reasoning?.budgetTokens ?? (request.reasoning?.effort && EFFORT_BUDGET[request.reasoning.effort]);
  // Thinking is a model-specific field: Anthropic's models take it (others would refuse it).
  if (budget && /(^|\.)anthropic\./.test(request.model)) {
    body.additionalModelRequestFields = { thinking: { type: "enabled", budget_tokens: budget } };
  }
  return body;
}

function userBlocks(message: Extract<ChatMessage, { role: "user" }>): ContentBlock[] {
  if (!message.parts) return [{ text: message.content }];
  return message.parts.map(toBlock);
}

function toBlock(part: ContentPart): ContentBlock {
  if (part.type === "text") return { text: part.text };
  const data = /^data:image\/([a-z]+);base64,(.*)$/s.exec(part.url);
  const format = data?.[1] === "jpg" ? "jpeg" : data?.[1];
  if (!data || !format || !IMAGE_FORMATS.has(format)) {
    throw invalidArgument(
      "Bedrock takes images as base64 data: URLs of PNG, JPEG, GIF or WebP, not https URLs (Kiln does not fetch them)",
      [{ field: "messages", issue: "has an image Bedrock does not read" }],
    );
  }
  return { image: { format: format as "png", source: { bytes: data[2] as never } } };
}

/** A tool output that is JSON goes as a json block (an object, as Converse wants), other text as text. */
function resultBlock(content: string): { json: never } | { text: string } {
  try {
    const value: unknown = JSON.parse(content);
    return {
      json: (value !== null && typeof value === "object" && !Array.isArray(value) ? value : { output: value }) as never,
    };
  } catch {
    return { text: content };
  }
}

/** Converse's schema name: `[a-zA-Z0-9_-]{1,64}`. */
function schemaName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
  return cleaned === "" ? "response" : cleaned;
}
