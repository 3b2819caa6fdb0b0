/**
 * A prompt version being written: the editor's fields, started from a version (or blank), the body
 * that creates it, and what it changes against the version it started from.
 */
import type { CreatePromptVersionRequest, PromptVersion, ToolRef } from "@kiln/sdk";
import jsonPatch from "fast-json-patch";
import type { DiffChange } from "./versioned.js";

/** One row of the messages editor: a text message, or a placeholder (`name`) for the caller's conversation. */
export interface DraftMessage {
  role: "system" | "developer" | "user" | "assistant" | "placeholder";
  content: string;
  name: string;
}

export interface PromptDraft {
  /** The version's messages; a lone system (and developer) message is saved as systemPrompt (developerPrompt). */
  messages: DraftMessage[];
  /** A model id of GET /api/models; "" for the default (the prompt's, else the deployment's). */
  model: string;
  temperature: string;
  maxOutputTokens: string;
  /** The response cache's default TTL in seconds (docs/cache.md "Defaults"); "" for none. */
  cacheTtlSeconds: string;
  format: "text" | "json_schema";
  outputSchema: string;
  /** The variables schema as JSON text. */
  variablesSchema: string;
  tools: ToolRef[];
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

export const BLANK_DRAFT: PromptDraft = {
  messages: [{ role: "system", content: "", name: "" }],
  model: "",
  temperature: "",
  maxOutputTokens: "",
  cacheTtlSeconds: "",
  format: "text",
  outputSchema: json({ type: "object", properties: {} }),
  variablesSchema: json({ type: "object", properties: {}, required: [] }),
  tools: [],
};

/** The editor's fields holding `version`'s content. */
export function draftOf(version: PromptVersion | null): PromptDraft {
  if (!version) return BLANK_DRAFT;
  const format = version.responseFormat;
  return {
    messages: version.messages.map((m) =>
      m.role === "placeholder"
        ? { role: m.role, content: "", name: m.name }
        : { role: m.role, content: m.content, name: "" },
    ),
    model: version.model ?? "",
    temperature: version.temperature === null ? "" : String(version.temperature),
    maxOutputTokens: version.maxOutputTokens === null ? "" : String(version.maxOutputTokens),
    cacheTtlSeconds: version.cacheTtlSeconds === null ? "" : String(version.cacheTtlSeconds),
    format: format.type,
    outputSchema: format.type === "json_schema" ? json(format.schema) : BLANK_DRAFT.outputSchema,
    variablesSchema: json(version.variablesSchema),
    tools: version.tools,
  };
}

const numberOrNull = (text: string) => (text.trim() === "" ? null : Number(text));

/** What is wrong with the draft before the API sees it: per field. */
export function draftIssues(draft: PromptDraft): Record<string, string> {
  const issues: Record<string, string> = {};
  if (draft.format === "json_schema") {
    try {
      JSON.parse(draft.outputSchema);
    } catch (e) {
      issues.outputSchema = `is not JSON: ${(e as Error).message}`;
    }
  }
  if (draft.temperature.trim() !== "" && Number.isNaN(Number(draft.temperature)))
    issues.temperature = "is not a number";
  if (draft.maxOutputTokens.trim() !== "" && !Number.isInteger(Number(draft.maxOutputTokens)))
    issues.maxOutputTokens = "is not a whole number";
  if (draft.cacheTtlSeconds.trim() !== "" && !Number.isInteger(Number(draft.cacheTtlSeconds)))
    issues.cacheTtlSeconds = "is not a whole number of seconds";
  return issues;
}

/** The body that creates the draft as a version, its variables schema given (scaffolded from the template). */
/**
 * A draft's messages as a version takes them: a system message alone (or followed by one developer
 * message) as systemPrompt and developerPrompt, a text version as before; anything else as messages.
 */
function templateOf(
  messages: DraftMessage[],
): Pick<CreatePromptVersionRequest, "systemPrompt" | "developerPrompt" | "messages"> {
  const [first, second, ...rest] = messages;
  const text = first?.role === "system" && rest.length === 0 && (!second || second.role === "developer");
  if (text) return { systemPrompt: first.content, developerPrompt: second?.content || null };
  return {
    messages: messages.map((m) =>
      m.role === "placeholder" ? { role: m.role, name: m.name } : { role: m.role, content: m.content },
    ),
  };
}

export function bodyOf(draft: PromptDraft, variablesSchema: Record<string, unknown>): CreatePromptVersionRequest {
  return {
    ...templateOf(draft.messages),
    variablesSchema,
    temperature: numberOrNull(draft.temperature),
    maxOutputTokens: numberOrNull(draft.maxOutputTokens),
    cacheTtlSeconds: numberOrNull(draft.cacheTtlSeconds),
    model: draft.model || null,
    tools: draft.tools.map((t) => ({ toolId: t.toolId, toolVersionId: t.toolVersionId })),
    responseFormat:
      draft.format === "text" ? { type: "text" } : { type: "json_schema", schema: JSON.parse(draft.outputSchema) },
  };
}

/** What a person compares of a version: its content, tools by key and pinned version. */
function documentOf(body: CreatePromptVersionRequest, tools: ToolRef[]): Record<string, unknown> {
  return {
    ...(body.messages
      ? { messages: body.messages }
      : { systemPrompt: body.systemPrompt, developerPrompt: body.developerPrompt ?? null }),
    model: body.model ?? null,
    temperature: body.temperature ?? null,
    maxOutputTokens: body.maxOutputTokens ?? null,
    cacheTtlSeconds: body.cacheTtlSeconds ?? null,
    responseFormat: body.responseFormat ?? { type: "text" },
    variablesSchema: body.variablesSchema ?? { type: "object" },
    tools: tools.map((t) => `${t.toolKey}@${t.toolVersionId}`),
  };
}

export const versionDocument = (v: PromptVersion) =>
  documentOf(
    {
      ...(v.chat ? { messages: v.messages } : { systemPrompt: v.systemPrompt, developerPrompt: v.developerPrompt }),
      model: v.model,
      temperature: v.temperature,
      maxOutputTokens: v.maxOutputTokens,
      cacheTtlSeconds: v.cacheTtlSeconds,
      responseFormat: v.responseFormat,
      variablesSchema: v.variablesSchema,
    },
    v.tools,
  );

export const draftDocument = (draft: PromptDraft, variablesSchema: Record<string, unknown>) =>
  documentOf(bodyOf(draft, variablesSchema), draft.tools);

const FIELD_NAMES: Record<string, string> = {
  messages: "Messages",
  systemPrompt: "System prompt",
  developerPrompt: "Developer prompt",
  model: "Model",
  temperature: "Temperature",
  maxOutputTokens: "Output token limit",
  cacheTtlSeconds: "Cache answers for (seconds)",
  responseFormat: "Response format",
  variablesSchema: "Variables schema",
  tools: "Tools",
};

/** The changes that turn `from` (nothing: every field added) into `to`, each path named for people. */
export function documentDiff(from: Record<string, unknown> | null, to: Record<string, unknown>): DiffChange[] {
  const changes: DiffChange[] = [];
  let before: unknown;
  for (const op of jsonPatch.compare(from ?? {}, to, true)) {
    if (op.op === "test") {
      before = op.value;
      continue;
    }
    if (op.op !== "add" && op.op !== "remove" && op.op !== "replace") continue;
    const [, field = "", ...rest] = op.path.split("/");
    // A message by its number as the editor shows it: "Message 3 / content".
    const [index, ...inner] = rest;
    const path =
      field === "messages" && index !== undefined
        ? [`Message ${Number(index) + 1}`, ...inner].join(" / ")
        : [FIELD_NAMES[field] ?? field, ...rest].join(" / ");
    changes.push({
      op: op.op,
      path,
      ...(op.op === "add" ? {} : { before }),
      ...(op.op === "remove" ? {} : { after: op.value }),
    });
  }
  return changes;
}
