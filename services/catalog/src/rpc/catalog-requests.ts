/**
 * Proto requests → use case inputs. A family's content message (PromptContent, ToolContent) is
 * read field by field; free-form JSON (`kiln.common.v1.JsonText`) goes to the use cases as its text,
 * exactly as sent, and an unset one as undefined (the use case's default, or for a tool version the
 * current version's value). The use cases check the text (valid JSON, depth, schema rules) and name
 * the REST field in every issue (`variablesSchema.properties.city.type`).
 */

import { textOf } from "@kiln/kit/json-text";
import type {
  CreatePromptVersionRequest,
  CreateToolRequest,
  CreateToolVersionRequest,
  ReplaceSkillPromptsRequest,
  ReplaceSkillToolsRequest,
  SaveAgentWorkflowRequest,
  ToolSelector,
  ValidateAgentWorkflowRequest,
} from "@kiln/proto/catalog";
import type { PromptVersionInput } from "../domain/prompt-version.js";
import type { PromptSelector } from "../skill-view.js";
import type { ToolSelector as ToolSelectorInput, ToolVersionInput } from "../tools.js";

/** Optional ids arrive as "" or unset from proto; the use cases take undefined for "not given". */
export const given = (value: string | undefined) => (value === undefined || value === "" ? undefined : value);

export const toolSelectorsOf = (tools: readonly ToolSelector[]): ToolSelectorInput[] =>
  tools.map((t) => ({ toolId: t.toolId, toolVersionId: given(t.toolVersionId) }));

export function promptVersionInputOf(
  req: CreatePromptVersionRequest,
): PromptVersionInput & { promptId: string; tools: ToolSelectorInput[]; message: string } {
  return { promptId: req.promptId, message: req.message, ...promptDraftInputOf(req) };
}

/** A version's content and tools, as creating it or running it unsaved (a PromptDraft) sends them. */
export function promptDraftInputOf(
  req: Pick<CreatePromptVersionRequest, "content" | "tools">,
): PromptVersionInput & { tools: ToolSelectorInput[] } {
  const c = req.content;
  return {
    systemPrompt: c?.systemPrompt ?? "",
    developerPrompt: c?.developerPrompt,
    variablesSchemaJson: c?.variablesSchema?.json,
    responseFormatJson: c?.responseFormat?.json,
    temperature: c?.temperature,
    maxOutputTokens: c?.maxOutputTokens,
    cacheTtlSeconds: c?.cacheTtlSeconds,
    model: c?.model,
    messages: (c?.messages ?? []).map((m) => ({ role: m.role, content: m.content, name: m.name })),
    tools: toolSelectorsOf(req.tools),
  };
}

/** A new tool: every content field is required ("" where unset, which the use case refuses). */
export function toolInputOf(req: CreateToolRequest) {
  const c = req.content;
  return {
    organizationId: req.organizationId,
    toolKey: req.toolKey,
    name: req.name,
    description: req.description,
    type: c?.type ?? "",
    configJson: textOf(c?.config),
    inputSchemaJson: textOf(c?.inputSchema),
  };
}

/** A tool version: a field left unset is copied from the current version. */
export function toolVersionInputOf(
  req: CreateToolVersionRequest,
): ToolVersionInput & { toolId: string; message: string } {
  const c = req.content;
  const content = { type: c?.type, configJson: c?.config?.json, inputSchemaJson: c?.inputSchema?.json };
  return { toolId: req.toolId, message: req.message, ...content };
}

export function skillPromptsInputOf(req: ReplaceSkillPromptsRequest): {
  skillVersionId: string;
  prompts: PromptSelector[];
} {
  return {
    skillVersionId: req.skillVersionId,
    prompts: req.prompts.map((p) => ({
      promptId: p.promptId,
      promptVersionId: given(p.promptVersionId),
      alias: p.alias,
      variablesJson: p.variables?.json,
    })),
  };
}

export const skillToolsInputOf = (req: ReplaceSkillToolsRequest) => ({
  skillVersionId: req.skillVersionId,
  tools: toolSelectorsOf(req.tools),
});

/** A workflow to save: unset is "" (not JSON, refused naming `workflow`). */
export const saveWorkflowInputOf = (req: SaveAgentWorkflowRequest) => ({
  agentVersionId: req.agentVersionId,
  workflowJson: textOf(req.workflow),
});

/** A workflow to validate: unset validates the saved one. */
export const validateWorkflowInputOf = (req: ValidateAgentWorkflowRequest) => ({
  agentVersionId: req.agentVersionId,
  workflowJson: req.workflow?.json,
});
