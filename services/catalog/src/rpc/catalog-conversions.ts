/**
 * Domain views → proto messages. JSON text goes into the `*_json` fields exactly as stored, so
 * user JSON reaches the gateway byte for byte.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type {
  AgentSchema,
  AgentVersionSchema,
  CompositionStepSchema,
  PromptSchema,
  PromptVersionSchema,
  ResolveAgentVersionResponseSchema,
  ResolvedPromptSchema,
  ResolvedToolSchema,
  ResolveSkillVersionResponseSchema,
  SkillSchema,
  SkillVersionSchema,
  ToolRefSchema,
  ToolSchema,
  ToolVersionSchema,
  VersionDiffSchema,
  VersionSummarySchema,
  WorkflowIssueSchema,
} from "@kiln/proto/catalog";
import type { AgentView } from "../agents.js";
import type { ToolPin } from "../domain/tool-pins.js";
import type { WorkflowIssue } from "../domain/workflow.js";
import type { PromptView } from "../prompts.js";
import type { ResolvedAgentView, ResolvedPromptView, ResolvedSkillView, ResolvedToolView } from "../resolve.js";
import type { SkillView } from "../skills.js";
import type {
  AgentVersionDoc,
  CompositionStepDoc,
  PromptVersionDoc,
  SkillVersionDoc,
  ToolVersionDoc,
} from "../store/catalog-store.js";
import type { ToolView } from "../tools.js";
import type { VersionDiffView } from "../versioned/diff.js";

const optionalTimestamp = (date: Date | null) => (date ? timestampFromDate(date) : undefined);

/** The fields every version message carries, whichever family it is of. */
const versionIdentityToProto = (v: { _id: string; organizationId: string; version: number; createdAt: Date }) => ({
  id: v._id,
  organizationId: v.organizationId,
  version: v.version,
  createdAt: timestampFromDate(v.createdAt),
});

/** The fields of a version that is drafted and published (every family but tools). */
const versionMetadataToProto = (v: {
  _id: string;
  organizationId: string;
  version: number;
  status: string;
  createdAt: Date;
  publishedAt: Date | null;
}) => ({
  ...versionIdentityToProto(v),
  status: v.status,
  publishedAt: optionalTimestamp(v.publishedAt),
});

/** The fields every versioned resource message carries. */
const resourceMetadataToProto = (r: {
  _id: string;
  organizationId: string;
  name: string;
  description: string;
  createdAt: Date;
  updatedAt: Date;
}) => ({
  id: r._id,
  organizationId: r.organizationId,
  name: r.name,
  description: r.description,
  createdAt: timestampFromDate(r.createdAt),
  updatedAt: timestampFromDate(r.updatedAt),
});

export function versionSummaryToProto(v: {
  _id: string;
  version: number;
  status: string;
  createdAt: Date;
  publishedAt: Date | null;
}): MessageInitShape<typeof VersionSummarySchema> {
  return {
    id: v._id,
    version: v.version,
    status: v.status,
    createdAt: timestampFromDate(v.createdAt),
    publishedAt: optionalTimestamp(v.publishedAt),
  };
}

export const toolRefToProto = (pin: ToolPin): MessageInitShape<typeof ToolRefSchema> => ({
  toolId: pin.toolId,
  toolVersionId: pin.toolVersionId,
  toolKey: pin.toolKey,
});

export function promptVersionToProto(v: PromptVersionDoc): MessageInitShape<typeof PromptVersionSchema> {
  return {
    ...versionMetadataToProto(v),
    promptId: v.promptId,
    systemPrompt: v.systemPrompt,
    developerPrompt: v.developerPrompt ?? undefined,
    variablesSchemaJson: v.variablesSchema,
    responseFormatJson: v.responseFormat,
    temperature: v.temperature ?? undefined,
    maxOutputTokens: v.maxOutputTokens ?? undefined,
    model: v.model ?? undefined,
    tools: v.tools.map(toolRefToProto),
  };
}

export function promptToProto(view: PromptView): MessageInitShape<typeof PromptSchema> {
  const p = view.prompt;
  return {
    ...resourceMetadataToProto(p),
    defaultModel: p.defaultModel ?? undefined,
    publishedVersionId: view.publishedVersionId ?? undefined,
    latestVersion: view.latestVersion,
    versions: view.versions.map(versionSummaryToProto),
    version: view.version ? promptVersionToProto(view.version) : undefined,
  };
}

export function toolToProto(view: ToolView): MessageInitShape<typeof ToolSchema> {
  const { tool, current } = view;
  return {
    ...resourceMetadataToProto(tool),
    toolKey: tool.toolKey,
    type: current.type,
    currentVersionId: current._id,
    latestVersion: view.latestVersion,
    configJson: current.config,
    inputSchemaJson: current.inputSchema,
  };
}

export function toolVersionToProto(v: ToolVersionDoc): MessageInitShape<typeof ToolVersionSchema> {
  return {
    ...versionIdentityToProto(v),
    toolId: v.toolId,
    type: v.type,
    configJson: v.config,
    inputSchemaJson: v.inputSchema,
  };
}

export function versionDiffToProto(diff: VersionDiffView): MessageInitShape<typeof VersionDiffSchema> {
  return {
    from: diff.from ?? undefined,
    to: diff.to,
    changes: diff.changes.map((c) => ({
      op: c.op,
      path: c.path,
      beforeJson: c.before === undefined ? undefined : JSON.stringify(c.before),
      afterJson: c.after === undefined ? undefined : JSON.stringify(c.after),
    })),
    summary: diff.summary,
  };
}

export const compositionStepToProto = (s: CompositionStepDoc): MessageInitShape<typeof CompositionStepSchema> => ({
  order: s.order,
  alias: s.alias,
  promptId: s.promptId,
  promptVersionId: s.promptVersionId,
  promptName: s.promptName,
  version: s.version,
  variablesJson: s.variables,
});

export function skillVersionToProto(v: SkillVersionDoc): MessageInitShape<typeof SkillVersionSchema> {
  return {
    ...versionMetadataToProto(v),
    skillId: v.skillId,
    promptComposition: v.promptComposition.map(compositionStepToProto),
    tools: v.tools.map(toolRefToProto),
    inputSchemaJson: v.inputSchema,
    outputSchemaJson: v.outputSchema,
  };
}

export function skillToProto(view: SkillView): MessageInitShape<typeof SkillSchema> {
  const { skill, described } = view;
  return {
    ...resourceMetadataToProto(skill),
    draftVersionId: view.draftVersionId ?? undefined,
    publishedVersionId: view.publishedVersionId ?? undefined,
    versions: view.versions.map(versionSummaryToProto),
    describedVersionId: described._id,
    promptComposition: described.promptComposition.map(compositionStepToProto),
    tools: described.tools.map(toolRefToProto),
    inputSchemaJson: described.inputSchema,
    outputSchemaJson: described.outputSchema,
  };
}

export const resolvedToolToProto = (t: ResolvedToolView): MessageInitShape<typeof ResolvedToolSchema> => ({
  toolId: t.pin.toolId,
  toolVersionId: t.pin.toolVersionId,
  toolKey: t.pin.toolKey,
  description: t.description,
  type: t.version.type,
  configJson: t.version.config,
  inputSchemaJson: t.version.inputSchema,
});

export const resolvedPromptToProto = (p: ResolvedPromptView): MessageInitShape<typeof ResolvedPromptSchema> => ({
  version: promptVersionToProto(p.version),
  promptName: p.promptName,
  tools: p.tools.map(resolvedToolToProto),
});

export const resolvedSkillToProto = (
  s: ResolvedSkillView,
): MessageInitShape<typeof ResolveSkillVersionResponseSchema> => ({
  version: skillVersionToProto(s.version),
  steps: s.steps.map((step) => ({
    step: compositionStepToProto(step.step),
    prompt: resolvedPromptToProto(step.prompt),
  })),
  tools: s.tools.map(resolvedToolToProto),
});

export function agentVersionToProto(v: AgentVersionDoc): MessageInitShape<typeof AgentVersionSchema> {
  return {
    ...versionMetadataToProto(v),
    agentId: v.agentId,
    workflowJson: v.workflow,
  };
}

export function agentToProto(view: AgentView): MessageInitShape<typeof AgentSchema> {
  const { agent, described } = view;
  return {
    ...resourceMetadataToProto(agent),
    publishedVersionId: view.publishedVersionId ?? undefined,
    draftVersionId: view.draftVersionId ?? undefined,
    versions: view.versions.map(versionSummaryToProto),
    describedVersionId: described._id,
    workflowJson: described.workflow,
  };
}

export const workflowIssueToProto = (i: WorkflowIssue): MessageInitShape<typeof WorkflowIssueSchema> => ({
  path: i.path,
  code: i.code,
  message: i.message,
});

export const resolvedAgentToProto = (
  a: ResolvedAgentView,
): MessageInitShape<typeof ResolveAgentVersionResponseSchema> => ({
  version: agentVersionToProto(a.version),
  steps: a.steps.map((s) => ({
    stepId: s.stepId,
    prompt: s.prompt ? resolvedPromptToProto(s.prompt) : undefined,
    skill: s.skill ? resolvedSkillToProto(s.skill) : undefined,
    tool: s.tool ? resolvedToolToProto(s.tool) : undefined,
  })),
});
