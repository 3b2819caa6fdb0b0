import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { unauthenticated } from "@kiln/kit/errors";
import { kPrincipal, kRequestId, type Principal } from "@kiln/kit/principal";
import { CatalogService } from "@kiln/proto/catalog";
import type { Agents } from "../agents.js";
import type { Bundles } from "../bundles/index.js";
import type { ImportRun } from "../bundles/run-import.js";
import type { LabelView } from "../label-view.js";
import type { Labels } from "../labels.js";
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
  workflowIssueToProto,
} from "./catalog-conversions.js";
import {
  promptVersionInputOf,
  saveWorkflowInputOf,
  skillPromptsInputOf,
  toolInputOf,
  toolSelectorsOf,
  toolVersionInputOf,
  validateWorkflowInputOf,
} from "./catalog-requests.js";
import { importDocumentOf, importReportToProto } from "./import-conversions.js";

function principalOf(ctx: HandlerContext): Principal {
  const p = ctx.values.get(kPrincipal);
  if (!p) throw unauthenticated("missing credentials");
  return p;
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

export function registerCatalogRpc(
  router: ConnectRouter,
  { prompts, tools, skills, agents, resolver, labels, bundles, importOrganization }: CatalogUseCases,
): void {
  router.service(CatalogService, {
    async createPrompt(req, ctx) {
      return { prompt: promptToProto(await prompts.createPrompt(principalOf(ctx), req)) };
    },
    async getPrompt(req, ctx) {
      return { prompt: promptToProto(await prompts.getPrompt(principalOf(ctx), req)) };
    },
    async listPrompts(req, ctx) {
      const page = await prompts.listPrompts(principalOf(ctx), req);
      return { prompts: page.items.map(promptToProto), nextCursor: page.nextCursor };
    },
    async updatePrompt(req, ctx) {
      return { prompt: promptToProto(await prompts.updatePrompt(principalOf(ctx), req)) };
    },
    async createPromptVersion(req, ctx) {
      return {
        version: promptVersionToProto(await prompts.createPromptVersion(principalOf(ctx), promptVersionInputOf(req))),
      };
    },
    async publishPromptVersion(req, ctx) {
      return { prompt: promptToProto(await prompts.publishPromptVersion(principalOf(ctx), req)) };
    },

    async createTool(req, ctx) {
      return { tool: toolToProto(await tools.createTool(principalOf(ctx), toolInputOf(req))) };
    },
    async getTool(req, ctx) {
      return { tool: toolToProto(await tools.getTool(principalOf(ctx), req)) };
    },
    async listTools(req, ctx) {
      const page = await tools.listTools(principalOf(ctx), req);
      return { tools: page.items.map(toolToProto), nextCursor: page.nextCursor };
    },
    async updateTool(req, ctx) {
      return { tool: toolToProto(await tools.updateTool(principalOf(ctx), req)) };
    },
    async createToolVersion(req, ctx) {
      return { version: toolVersionToProto(await tools.createToolVersion(principalOf(ctx), toolVersionInputOf(req))) };
    },
    async diffToolVersions(req, ctx) {
      return { diff: versionDiffToProto(await tools.diffToolVersions(principalOf(ctx), req)) };
    },

    async createSkill(req, ctx) {
      return { skill: skillToProto(await skills.createSkill(principalOf(ctx), req)) };
    },
    async getSkill(req, ctx) {
      return { skill: skillToProto(await skills.getSkill(principalOf(ctx), req)) };
    },
    async listSkills(req, ctx) {
      const page = await skills.listSkills(principalOf(ctx), req);
      return { skills: page.items.map(skillToProto), nextCursor: page.nextCursor };
    },
    async updateSkill(req, ctx) {
      return { skill: skillToProto(await skills.updateSkill(principalOf(ctx), req)) };
    },
    async createSkillVersion(req, ctx) {
      return { version: skillVersionToProto(await skills.createSkillVersion(principalOf(ctx), req)) };
    },
    async publishSkillVersion(req, ctx) {
      return { skill: skillToProto(await skills.publishSkillVersion(principalOf(ctx), req)) };
    },
    async diffSkillVersions(req, ctx) {
      return { diff: versionDiffToProto(await skills.diffSkillVersions(principalOf(ctx), req)) };
    },
    async replaceSkillPrompts(req, ctx) {
      return { skill: skillToProto(await skills.replaceSkillPrompts(principalOf(ctx), skillPromptsInputOf(req))) };
    },
    async replaceSkillTools(req, ctx) {
      const input = { skillVersionId: req.skillVersionId, tools: toolSelectorsOf(req.tools) };
      return { skill: skillToProto(await skills.replaceSkillTools(principalOf(ctx), input)) };
    },

    // For the execution service, with the end user's principal forwarded.
    async listLabels(req, ctx) {
      return { labels: (await labels.listLabels(principalOf(ctx), req)).map(labelToProto) };
    },
    async setLabel(req, ctx) {
      return { label: labelToProto(await labels.setLabel(principalOf(ctx), req)) };
    },
    async deleteLabel(req, ctx) {
      return { label: labelToProto(await labels.deleteLabel(principalOf(ctx), req)) };
    },
    async listLabelHistory(req, ctx) {
      const page = await labels.listLabelHistory(principalOf(ctx), req);
      return { moves: page.items.map(labelMoveToProto), nextCursor: page.nextCursor };
    },
    async exportBundle(req, ctx) {
      return { bundleJson: JSON.stringify(await bundles.exportBundle(principalOf(ctx), req)) };
    },
    async importOrganization(req, ctx) {
      const call = { principal: principalOf(ctx), requestId: ctx.values.get(kRequestId) };
      const input = { organizationId: req.organizationId, dryRun: req.dryRun, document: importDocumentOf(req) };
      return importReportToProto(await importOrganization(call, input));
    },
    async getImport(req, ctx) {
      return { status: await bundles.getImport(principalOf(ctx), req) };
    },
    async resolvePromptVersion(req, ctx) {
      return { prompt: resolvedPromptToProto(await resolver.resolvePromptVersion(principalOf(ctx), req)) };
    },
    async resolveSkillVersion(req, ctx) {
      return resolvedSkillToProto(await resolver.resolveSkillVersion(principalOf(ctx), req));
    },
    async resolveAgentVersion(req, ctx) {
      return resolvedAgentToProto(await resolver.resolveAgentVersion(principalOf(ctx), req));
    },

    async createAgent(req, ctx) {
      return { agent: agentToProto(await agents.createAgent(principalOf(ctx), req)) };
    },
    async getAgent(req, ctx) {
      return { agent: agentToProto(await agents.getAgent(principalOf(ctx), req)) };
    },
    async listAgents(req, ctx) {
      const page = await agents.listAgents(principalOf(ctx), req);
      return { agents: page.items.map(agentToProto), nextCursor: page.nextCursor };
    },
    async updateAgent(req, ctx) {
      return { agent: agentToProto(await agents.updateAgent(principalOf(ctx), req)) };
    },
    async createAgentVersion(req, ctx) {
      return { version: agentVersionToProto(await agents.createAgentVersion(principalOf(ctx), req)) };
    },
    async saveAgentWorkflow(req, ctx) {
      return {
        version: agentVersionToProto(await agents.saveAgentWorkflow(principalOf(ctx), saveWorkflowInputOf(req))),
      };
    },
    async validateAgentWorkflow(req, ctx) {
      const result = await agents.validateAgentWorkflow(principalOf(ctx), validateWorkflowInputOf(req));
      return {
        valid: result.valid,
        errors: result.errors.map(workflowIssueToProto),
        warnings: result.warnings.map(workflowIssueToProto),
      };
    },
    async publishAgentVersion(req, ctx) {
      return { agent: agentToProto(await agents.publishAgentVersion(principalOf(ctx), req)) };
    },
    async diffAgentVersions(req, ctx) {
      return { diff: versionDiffToProto(await agents.diffAgentVersions(principalOf(ctx), req)) };
    },
    async rollbackAgentVersion(req, ctx) {
      return { agent: agentToProto(await agents.rollbackAgentVersion(principalOf(ctx), req)) };
    },
  });
}
