import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { answering, answeringOne, answeringPage, kRequestId, principalOf, withInput } from "@kiln/kit/principal";
import { CatalogService, type ResolvePromptVersionRequest } from "@kiln/proto/catalog";
import type { Agents } from "../agents.js";
import type { Bundles } from "../bundles/index.js";
import type { ImportRun } from "../bundles/run-import.js";
import type { LabelView } from "../label-view.js";
import type { Labels } from "../labels.js";
import type { PromptFolderView } from "../prompt-folders.js";
import type { Prompts } from "../prompts.js";
import type { Resolver } from "../resolve.js";
import type { Skills } from "../skills.js";
import type { LabelMoveDoc } from "../store/catalog-store.js";
import type { Tools } from "../tools.js";
import {
  agentToProto,
  agentVersionToProto,
  promptToProto,
  promptVersionToProto,
  resolvedAgentToProto,
  resolvedPromptToProto,
  resolvedSkillToProto,
  skillToProto,
  skillVersionToProto,
  toolToProto,
  toolVersionToProto,
  versionDiffToProto,
  workflowValidationToProto,
} from "./catalog-conversions.js";
import {
  promptDraftInputOf,
  promptVersionInputOf,
  saveWorkflowInputOf,
  skillPromptsInputOf,
  skillToolsInputOf,
  toolInputOf,
  toolVersionInputOf,
  validateWorkflowInputOf,
} from "./catalog-requests.js";
import { importDocumentOf, importReportToProto } from "./import-conversions.js";

/**
 * A resolve answered with the change counter it is current at: what it read holds every write made
 * before the counter reached the caller's min_generation (docs/architecture.md "Consistent resolution").
 */
function atGeneration<Req, Res extends object>(
  atLeast: (minGeneration: number) => number,
  handler: (req: Req, ctx: HandlerContext) => Promise<Res>,
) {
  return async (req: Req & { minGeneration: bigint }, ctx: HandlerContext) => {
    const generation = atLeast(Number(req.minGeneration));
    return { ...(await handler(req, ctx)), generation: BigInt(generation) };
  };
}

export interface CatalogUseCases {
  prompts: Prompts;
  tools: Tools;
  skills: Skills;
  agents: Agents;
  resolver: Resolver;
  labels: Labels;
  bundles: Bundles;
  /** The whole import of an organization, evaluation cases included. */
  importOrganization: ImportRun;
}

const labelToProto = (l: LabelView) => ({ ...l, updatedAt: timestampFromDate(l.updatedAt) });

const labelMoveToProto = (m: LabelMoveDoc) => ({
  id: m._id,
  label: m.label,
  versionId: m.versionId ?? "",
  version: m.version ?? 0,
  previousVersionId: m.previousVersionId ?? "",
  action: m.action,
  at: timestampFromDate(m.at),
  by: m.by,
});

/** The answers of the catalog RPCs, by what a use case returns. */
const prompt = answeringOne("prompt", promptToProto);
const tool = answeringOne("tool", toolToProto);
const skill = answeringOne("skill", skillToProto);
const agent = answeringOne("agent", agentToProto);
const label = answeringOne("label", labelToProto);
const diff = answeringOne("diff", versionDiffToProto);
const promptVersion = answeringOne("version", promptVersionToProto);
const toolVersion = answeringOne("version", toolVersionToProto);
const skillVersion = answeringOne("version", skillVersionToProto);
const agentVersion = answeringOne("version", agentVersionToProto);

export function registerCatalogRpc(
  router: ConnectRouter,
  { prompts, tools, skills, agents, resolver, labels, bundles, importOrganization }: CatalogUseCases,
): void {
  router.service(CatalogService, {
    createPrompt: prompt(prompts.createPrompt),
    getPrompt: prompt(prompts.getPrompt),
    listPrompts: answeringPage("prompts", promptToProto)(prompts.listPrompts),
    listPromptFolders: answeringPage("folders", (f: PromptFolderView) => f)(prompts.listPromptFolders),
    updatePrompt: prompt(prompts.updatePrompt),
    createPromptVersion: promptVersion(withInput(promptVersionInputOf, prompts.createPromptVersion)),
    publishPromptVersion: prompt(prompts.publishPromptVersion),
    diffPromptVersions: diff(prompts.diffPromptVersions),

    createTool: tool(withInput(toolInputOf, tools.createTool)),
    getTool: tool(tools.getTool),
    listTools: answeringPage("tools", toolToProto)(tools.listTools),
    updateTool: tool(tools.updateTool),
    createToolVersion: toolVersion(withInput(toolVersionInputOf, tools.createToolVersion)),
    diffToolVersions: diff(tools.diffToolVersions),

    createSkill: skill(skills.createSkill),
    getSkill: skill(skills.getSkill),
    listSkills: answeringPage("skills", skillToProto)(skills.listSkills),
    updateSkill: skill(skills.updateSkill),
    createSkillVersion: skillVersion(skills.createSkillVersion),
    publishSkillVersion: skill(skills.publishSkillVersion),
    diffSkillVersions: diff(skills.diffSkillVersions),
    replaceSkillPrompts: skill(withInput(skillPromptsInputOf, skills.replaceSkillPrompts)),
    replaceSkillTools: skill(withInput(skillToolsInputOf, skills.replaceSkillTools)),

    // For the execution service, with the end user's principal forwarded.
    listLabels: answering((views: LabelView[]) => ({ labels: views.map(labelToProto) }))(labels.listLabels),
    setLabel: label(labels.setLabel),
    deleteLabel: label(labels.deleteLabel),
    listLabelHistory: answeringPage("moves", labelMoveToProto)(labels.listLabelHistory),
    exportBundle: answering((bundle: object) => ({ bundleJson: JSON.stringify(bundle) }))(bundles.exportBundle),
    async importOrganization(req, ctx) {
      const call = { principal: principalOf(ctx), requestId: ctx.values.get(kRequestId) };
      const input = { organizationId: req.organizationId, dryRun: req.dryRun, document: importDocumentOf(req) };
      return importReportToProto(await importOrganization(call, input));
    },
    getImport: answeringOne("status", (status: string) => status)(bundles.getImport),
    resolvePromptVersion: atGeneration(
      resolver.atLeast,
      answeringOne(
        "prompt",
        resolvedPromptToProto,
      )(
        withInput(
          (req: ResolvePromptVersionRequest) => ({ ...req, draft: req.draft && promptDraftInputOf(req.draft) }),
          resolver.resolvePromptVersion,
        ),
      ),
    ),
    resolveSkillVersion: atGeneration(resolver.atLeast, answering(resolvedSkillToProto)(resolver.resolveSkillVersion)),
    resolveAgentVersion: answering(resolvedAgentToProto)(resolver.resolveAgentVersion),

    createAgent: agent(agents.createAgent),
    getAgent: agent(agents.getAgent),
    listAgents: answeringPage("agents", agentToProto)(agents.listAgents),
    updateAgent: agent(agents.updateAgent),
    createAgentVersion: agentVersion(agents.createAgentVersion),
    saveAgentWorkflow: agentVersion(withInput(saveWorkflowInputOf, agents.saveAgentWorkflow)),
    validateAgentWorkflow: answering(workflowValidationToProto)(
      withInput(validateWorkflowInputOf, agents.validateAgentWorkflow),
    ),
    publishAgentVersion: agent(agents.publishAgentVersion),
    diffAgentVersions: diff(agents.diffAgentVersions),
    rollbackAgentVersion: agent(agents.rollbackAgentVersion),
  });
}
