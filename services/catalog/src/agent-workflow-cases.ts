/**
 * The agent use cases on one version's workflow: save a draft's workflow (its shape checked) and
 * validate a workflow, saved or given, without failing for what is found.
 */
import { invalidArgument, notFound } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";
import { SCOPES } from "./access.js";
import { publishedVersionRefused } from "./agent-view.js";
import { type WorkflowValidation, type WorkflowValidator, workflowDetails } from "./agent-workflow-validator.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { Issues } from "./domain/issues.js";
import { parseJsonText } from "./domain/json-schema.js";
import { parseWorkflow, type WorkflowIssue } from "./domain/workflow.js";

type AgentScope = typeof SCOPES.agentsRead | typeof SCOPES.agentsWrite;

export function createAgentWorkflowCases(
  deps: CatalogDeps,
  validator: WorkflowValidator,
  touch: (agentId: string, at: Date) => Promise<void>,
) {
  const c = deps.collections;

  /** A version addressed by its own id (the workflow routes). */
  async function versionFor(principal: Principal, versionId: string, scope: AgentScope) {
    if (versionId === "") {
      throw invalidArgument("agentVersionId is required", [{ field: "agentVersionId", issue: "is required" }]);
    }
    const version = await c.agentVersions.findOne({ _id: versionId });
    if (!version) throw notFound("agent version");
    await deps.access.onResource(principal, version.organizationId, scope, "agent version");
    const agent = await c.agents.findOne({ _id: version.agentId });
    if (!agent) throw notFound("agent version");
    return { agent, version };
  }

  return {
    /**
     * Saves a draft's workflow. A malformed shape (types, required and unknown fields) is 400; what
     * it means (references, graph, bindings) is judged by validate and publish, so work in progress
     * can be saved.
     */
    async saveAgentWorkflow(principal: Principal, input: { agentVersionId: string; workflowJson: string }) {
      const { agent, version } = await versionFor(principal, input.agentVersionId, SCOPES.agentsWrite);
      if (version.status === "published") throw publishedVersionRefused(version);
      const issues = new Issues();
      const parsed = parseJsonText(issues, "workflow", input.workflowJson);
      issues.throwIfAny("invalid workflow");
      const shape = parseWorkflow(parsed).issues;
      if (shape.length > 0) throw invalidArgument("invalid workflow", workflowDetails(shape));
      const at = deps.now();
      const updated = await c.agentVersions.findOneAndUpdate(
        { _id: version._id, status: "draft" },
        { $set: { workflow: input.workflowJson, updatedAt: at } },
      );
      if (!updated) throw publishedVersionRefused(version);
      await touch(agent._id, at);
      return updated;
    },

    /** Validates `workflowJson` (default: the version's saved workflow); never fails for what it finds. */
    async validateAgentWorkflow(
      principal: Principal,
      input: { agentVersionId: string; workflowJson?: string },
    ): Promise<WorkflowValidation> {
      const { agent, version } = await versionFor(principal, input.agentVersionId, SCOPES.agentsRead);
      const text = input.workflowJson ?? version.workflow;
      const issues = new Issues();
      const parsed = parseJsonText(issues, "", text);
      if (parsed === undefined) {
        const errors = issues.all().map((i): WorkflowIssue => ({ path: "", code: "malformed", message: i.issue }));
        return { valid: false, errors, warnings: [] };
      }
      const { valid, errors, warnings } = await validator.validate(agent.organizationId, parsed);
      return { valid, errors, warnings };
    },
  };
}
