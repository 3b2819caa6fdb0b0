/**
 * Domain views → proto messages. Stored JSON text goes into `kiln.common.v1.JsonText` exactly as
 * stored, so user JSON reaches the gateway byte for byte. Each family's content (PromptContent,
 * ToolContent, SkillContent) is made by one function, whichever message carries it.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { jsonTextOf, optionalJsonText } from "@kiln/kit/json-text";
import type {
  AgentSchema,
  AgentVersionSchema,
  CompositionStepSchema,
  PromptContentSchema,
  PromptSchema,
  PromptVersionSchema,
  ResolveAgentVersionResponseSchema,
  ResolvedPromptSchema,
  ResolvedToolSchema,
  ResolveSkillVersionResponseSchema,
  SkillContentSchema,
  SkillSchema,
  SkillVersionSchema,
  ToolContentSchema,
  ToolSchema,
  ToolVersionSchema,
  ValidateAgentWorkflowResponseSchema,
  VersionDiffSchema,
  WorkflowIssueSchema,
} from "@kiln/proto/catalog";
import type { WorkflowValidation } from "../agent-workflow-validator.js";
import type { AgentView } from "../agents.js";
import { messagesOfVersion } from "../domain/prompt-messages.js";
import { toolPinOf } from "../domain/tool-pins.js";
import type { WorkflowIssue } from "../domain/workflow.js";
import type { PromptView } from "../prompts.js";
import type { ResolvedAgentView, ResolvedPromptView, ResolvedSkillView, ResolvedToolView } from "../resolve.js";
import { compositionStepOf, type SkillView } from "../skill-view.js";
import type {
  AgentVersionDoc,
  CompositionStepDoc,
  DraftedVersionDoc,
  PromptVersionDoc,
  ResourceDoc,
  SkillVersionDoc,
  ToolVersionDoc,
  VersionDoc,
} from "../store/catalog-store.js";
import type { ToolView } from "../tools.js";
import type { DescribedVersions } from "../versioned/described.js";
import type { VersionDiffView } from "../versioned/diff.js";

const optionalTimestamp = (date: Date | null) => (date ? timestampFromDate(date) : undefined);

/** The fields every versioned resource message carries. */
const resourceMetadataToProto = (r: ResourceDoc) => ({
  id: r._id,
  organizationId: r.organizationId,
  name: r.name,
  description: r.description,
  createdAt: timestampFromDate(r.createdAt),
  updatedAt: timestampFromDate(r.updatedAt),
});

/** Who made a version, and the change message it was given. */
const authorshipToProto = (v: VersionDoc) => ({
  createdBy: v.createdBy ?? undefined,
  message: v.message ?? undefined,
});

/** A version as a resource's list of versions shows it. */
const versionSummaryToProto = (v: DraftedVersionDoc) => ({
  id: v._id,
  version: v.version,
  status: v.status,
  createdAt: timestampFromDate(v.createdAt),
  publishedAt: optionalTimestamp(v.publishedAt),
  ...authorshipToProto(v),
});

/** The fields of a version message of a family that drafts and publishes (every family but tools). */
const versionMetadataToProto = (v: DraftedVersionDoc) => ({
  ...versionSummaryToProto(v),
  organizationId: v.organizationId,
});

/** The versions of a skill or agent, and which of them its answer describes. */
const describedVersionsToProto = (view: DescribedVersions<DraftedVersionDoc>) => ({
  draftVersionId: view.draftVersionId ?? undefined,
  publishedVersionId: view.publishedVersionId ?? undefined,
  versions: view.versions.map(versionSummaryToProto),
  describedVersionId: view.described._id,
});

const promptContentToProto = (v: PromptVersionDoc): MessageInitShape<typeof PromptContentSchema> => ({
  messages: messagesOfVersion(v).map((m) =>
    m.role === "placeholder" ? { role: m.role, name: m.name } : { role: m.role, content: m.content },
  ),
  chat: (v.messages?.length ?? 0) > 0,
  systemPrompt: v.systemPrompt,
  developerPrompt: v.developerPrompt ?? undefined,
  variablesSchema: jsonTextOf(v.variablesSchema),
  responseFormat: jsonTextOf(v.responseFormat),
  temperature: v.temperature ?? undefined,
  maxOutputTokens: v.maxOutputTokens ?? undefined,
  cacheTtlSeconds: v.cacheTtlSeconds,
  model: v.model ?? undefined,
});

export function promptVersionToProto(v: PromptVersionDoc): MessageInitShape<typeof PromptVersionSchema> {
  return {
    ...versionMetadataToProto(v),
    promptId: v.promptId,
    content: promptContentToProto(v),
    tools: v.tools.map(toolPinOf),
    includes: v.includes ?? [],
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
    partials: view.partials ?? [],
    unresolvedPartial: view.unresolvedPartial,
  };
}

const toolContentToProto = (v: ToolVersionDoc): MessageInitShape<typeof ToolContentSchema> => ({
  type: v.type,
  config: jsonTextOf(v.config),
  inputSchema: jsonTextOf(v.inputSchema),
});

export function toolToProto(view: ToolView): MessageInitShape<typeof ToolSchema> {
  const { tool, current } = view;
  return {
    ...resourceMetadataToProto(tool),
    toolKey: tool.toolKey,
    currentVersionId: current._id,
    latestVersion: view.latestVersion,
    content: toolContentToProto(current),
  };
}

export function toolVersionToProto(v: ToolVersionDoc): MessageInitShape<typeof ToolVersionSchema> {
  return {
    id: v._id,
    organizationId: v.organizationId,
    version: v.version,
    createdAt: timestampFromDate(v.createdAt),
    ...authorshipToProto(v),
    toolId: v.toolId,
    content: toolContentToProto(v),
  };
}

export function versionDiffToProto(diff: VersionDiffView): MessageInitShape<typeof VersionDiffSchema> {
  return {
    from: diff.from ?? undefined,
    to: diff.to,
    changes: diff.changes.map((c) => ({
      op: c.op,
      path: c.path,
      before: optionalJsonText(c.before),
      after: optionalJsonText(c.after),
    })),
    summary: diff.summary,
  };
}

const compositionStepToProto = (s: CompositionStepDoc): MessageInitShape<typeof CompositionStepSchema> =>
  compositionStepOf(s, jsonTextOf);

const skillContentToProto = (v: SkillVersionDoc): MessageInitShape<typeof SkillContentSchema> => ({
  promptComposition: v.promptComposition.map(compositionStepToProto),
  tools: v.tools.map(toolPinOf),
  inputSchema: jsonTextOf(v.inputSchema),
  outputSchema: jsonTextOf(v.outputSchema),
});

export function skillVersionToProto(v: SkillVersionDoc): MessageInitShape<typeof SkillVersionSchema> {
  return {
    ...versionMetadataToProto(v),
    skillId: v.skillId,
    content: skillContentToProto(v),
  };
}

export function skillToProto(view: SkillView): MessageInitShape<typeof SkillSchema> {
  return {
    ...resourceMetadataToProto(view.skill),
    ...describedVersionsToProto(view),
    content: skillContentToProto(view.described),
  };
}

const resolvedToolToProto = (t: ResolvedToolView): MessageInitShape<typeof ResolvedToolSchema> => ({
  ...toolPinOf(t.pin),
  description: t.description,
  content: toolContentToProto(t.version),
});

export const resolvedPromptToProto = (p: ResolvedPromptView): MessageInitShape<typeof ResolvedPromptSchema> => ({
  version: promptVersionToProto(p.version),
  promptName: p.promptName,
  tools: p.tools.map(resolvedToolToProto),
  labelCacheTtlSeconds: p.labelCacheTtlSeconds,
  partials: p.partials ?? [],
  unresolvedPartial: p.unresolvedPartial,
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
    workflow: jsonTextOf(v.workflow),
  };
}

export function agentToProto(view: AgentView): MessageInitShape<typeof AgentSchema> {
  return {
    ...resourceMetadataToProto(view.agent),
    ...describedVersionsToProto(view),
    workflow: jsonTextOf(view.described.workflow),
  };
}

const workflowIssueToProto = (i: WorkflowIssue): MessageInitShape<typeof WorkflowIssueSchema> => ({
  path: i.path,
  code: i.code,
  message: i.message,
});

export const workflowValidationToProto = (
  r: WorkflowValidation,
): MessageInitShape<typeof ValidateAgentWorkflowResponseSchema> => ({
  valid: r.valid,
  errors: r.errors.map(workflowIssueToProto),
  warnings: r.warnings.map(workflowIssueToProto),
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
