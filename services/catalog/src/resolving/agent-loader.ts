/**
 * Resolves an agent version with its workflow's references pinned and each step resolved as a
 * prompt, skill or tool run resolves it.
 */

import { DomainError, type FieldIssue, failedPrecondition, notFound } from "@kiln/kit/errors";
import { createWorkflowValidator, workflowDetails } from "../agent-workflow-validator.js";
import type { CatalogDeps } from "../catalog-deps.js";
import { LIVE_PUBLISHED_SORT } from "../domain/versions.js";
import { parseWorkflow } from "../domain/workflow.js";
import { type Loading, notSelected, type VersionRequest } from "./loading.js";
import type {
  ResolvedAgentStepView,
  ResolvedAgentView,
  ResolvedPromptView,
  ResolvedSkillView,
  ResolvedToolView,
} from "./views.js";

export function createAgentLoader(
  deps: CatalogDeps,
  l: Loading,
  loadPrompt: (input: VersionRequest & { promptId: string }) => Promise<ResolvedPromptView>,
  loadSkill: (input: VersionRequest & { skillId: string; preferDraft: boolean }) => Promise<ResolvedSkillView>,
) {
  const c = deps.collections;
  const workflows = createWorkflowValidator(deps);
  const { versionsById, unresolvable } = l;

  async function loadTool(organizationId: string, toolId: string, toolVersionId: string): Promise<ResolvedToolView> {
    const [versions, tool] = await Promise.all([
      versionsById(c.toolVersions, [toolVersionId]),
      c.tools.findOne({ _id: toolId }),
    ]);
    const version = versions.get(toolVersionId);
    if (!tool || tool.organizationId !== organizationId) throw notFound("tool");
    if (!version || version.toolId !== toolId || version.organizationId !== organizationId) {
      throw notFound("tool version");
    }
    return { pin: { toolId, toolVersionId, toolKey: tool.toolKey }, description: tool.description, version };
  }

  async function loadAgent(input: VersionRequest & { agentId: string }): Promise<ResolvedAgentView> {
    const organizationId = input.organizationId;
    const { viaLabel, labelled } = await l.labelled("agent", input.agentId, input);
    const named = input.versionId || labelled || "";
    const [agent, selected] = await Promise.all([
      c.agents.findOne({ _id: input.agentId }),
      viaLabel && labelled === null
        ? null
        : named !== ""
          ? c.agentVersions.findOne({ _id: named, agentId: input.agentId })
          : c.agentVersions
              .find({ agentId: input.agentId, status: "published" }, { sort: LIVE_PUBLISHED_SORT, limit: 1 })
              .then(([live]) => live ?? null),
    ]);
    if (!agent || agent.organizationId !== organizationId) throw notFound("agent");
    if (!selected || selected.organizationId !== organizationId) notSelected("agent", input);
    let version = selected;
    if (version.status === "draft") {
      const result = await workflows.validate(organizationId, JSON.parse(version.workflow));
      if (!result.valid || !result.pinned) {
        throw failedPrecondition(
          `agent version ${version.version} does not run: its workflow is invalid`,
          workflowDetails(result.errors),
        );
      }
      version = { ...version, workflow: JSON.stringify(result.pinned) };
    }
    const { workflow } = parseWorkflow(JSON.parse(version.workflow));
    const problems: FieldIssue[] = [];
    const steps = await Promise.all(
      workflow.steps.map(async (step): Promise<ResolvedAgentStepView | undefined> => {
        const versionId = step.ref.versionId ?? "";
        const at = `workflow.steps[${step.index}].ref`;
        try {
          if (step.type === "prompt") {
            const prompt = await loadPrompt({ organizationId, promptId: step.ref.id, versionId });
            return { stepId: step.id, type: step.type, prompt };
          }
          if (step.type === "skill") {
            const skill = await loadSkill({ organizationId, skillId: step.ref.id, versionId, preferDraft: false });
            return { stepId: step.id, type: step.type, skill };
          }
          const tool = await loadTool(organizationId, step.ref.id, versionId);
          return { stepId: step.id, type: step.type, tool };
        } catch (e) {
          if (!(e instanceof DomainError)) throw e;
          problems.push({ field: at, issue: e.message });
          for (const d of e.details) problems.push({ field: `${at}.${d.field}`, issue: d.issue });
          return undefined;
        }
      }),
    );
    if (problems.length > 0) throw unresolvable(`agent version ${version.version}`, problems);
    return { version, steps: steps.filter((s): s is ResolvedAgentStepView => s !== undefined) };
  }

  return loadAgent;
}
