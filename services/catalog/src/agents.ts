import { PRODUCTION } from "@kiln/contracts/labels";
import { DomainError, failedPrecondition } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";
import { type AgentView, agentVersionDocument, agentView, EMPTY_WORKFLOW } from "./agent-view.js";
import { createAgentWorkflowCases } from "./agent-workflow-cases.js";
import { createWorkflowValidator, type WorkflowValidator, workflowDetails } from "./agent-workflow-validator.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { livePublishedVersion } from "./domain/versions.js";
import type { AgentDoc, AgentVersionDoc } from "./store/catalog-store.js";
import { publishedCases } from "./versioned/cases.js";
import { type VersionDiffView, versionIdRequired } from "./versioned/diff.js";
import { draftCases } from "./versioned/drafts.js";
import { familyStores } from "./versioned/families.js";
import { recordPublish } from "./versioned/label-moves.js";
import { alreadyPublished } from "./versioned/resource.js";

export { type AgentView, agentVersionDocument, agentView, EMPTY_WORKFLOW } from "./agent-view.js";
export {
  createWorkflowValidator,
  type WorkflowValidation,
  type WorkflowValidator,
  workflowDetails,
} from "./agent-workflow-validator.js";

export type Agents = ReturnType<typeof createAgents>;

/** The agent authoring use cases (api.md "Agents"); the workflow ones are in agent-workflow-cases.ts. */
export function createAgents(deps: CatalogDeps, validator: WorkflowValidator = createWorkflowValidator(deps)) {
  const family = familyStores(deps).agent;
  const cases = publishedCases(deps, family, { view: agentView, described: "described" });
  const resource = cases.resource;
  const drafts = draftCases(deps, family, cases, {
    empty: { workflow: EMPTY_WORKFLOW },
    of: (v: AgentVersionDoc) => ({ workflow: v.workflow }),
    version: (agent: AgentDoc, head, content) => ({ ...head, agentId: agent._id, ...content }),
    parent: (base) => base,
  });

  /** Validates a stored version's workflow; an invalid one is failed_precondition with the errors. */
  async function validForPublishing(agent: AgentDoc, version: AgentVersionDoc, what: string): Promise<string> {
    const parsed = JSON.parse(version.workflow) as unknown;
    const result = await validator.validate(agent.organizationId, parsed);
    if (!result.valid || !result.pinned) {
      throw failedPrecondition(
        `agent version ${version.version} cannot be ${what}: its workflow is invalid`,
        workflowDetails(result.errors),
      );
    }
    // Text kept as saved unless a reference was pinned.
    const pinnedText = JSON.stringify(result.pinned);
    return pinnedText === JSON.stringify(parsed) ? version.workflow : pinnedText;
  }

  return {
    ...createAgentWorkflowCases(deps, validator, resource.touch),

    /** A agent with an empty draft version 1 (workflow `{}`). */
    createAgent: drafts.create,
    getAgent: cases.get,
    listAgents: cases.list,
    updateAgent: (principal: Principal, input: { id: string; name?: string; description?: string }) =>
      cases.update(principal, input),

    /** A new draft copied from `fromVersionId` (default: the latest); at most one draft per agent. */
    createAgentVersion: (principal: Principal, input: { agentId: string; fromVersionId: string }) =>
      drafts.newDraft(principal, input.agentId, input.fromVersionId),

    /**
     * Publishes a draft (default: the agent's draft) whose workflow is valid, with every reference
     * without a version pinned to the version published now; the draft slot is released.
     */
    async publishAgentVersion(principal: Principal, input: { agentId: string; versionId: string }): Promise<AgentView> {
      const { parent, version } = await cases.toPublish(principal, input.agentId, input.versionId);
      const workflow = await validForPublishing(parent, version, "published");
      return cases.publish(principal, parent, version, {
        filter: { workflow: version.workflow },
        set: { workflow },
        lost: async () => {
          const now = await family.versions.findOne({ _id: version._id });
          if (now?.status === "published") return alreadyPublished("agent", version);
          return new DomainError("unavailable", "the workflow changed while it was being published; retry");
        },
      });
    },

    async diffAgentVersions(
      principal: Principal,
      input: { agentId: string; versionId: string; againstVersionId: string },
    ): Promise<VersionDiffView> {
      return resource.diff(principal, { parentId: input.agentId, ...input }, agentVersionDocument);
    },

    /**
     * A new version copying `versionId`'s workflow, validated like publish and published in one
     * insert (it is never a draft, so the draft slot is untouched); history is never rewritten.
     */
    async rollbackAgentVersion(principal: Principal, input: { agentId: string; versionId: string }) {
      const agent = await resource.parentFor(principal, input.agentId, family.write);
      // A rollback publishes, so it moves the production label (docs/labels.md).
      await deps.access.moveLabel(principal, agent.organizationId, family.write, "agent", PRODUCTION);
      versionIdRequired(input.versionId);
      const source = await cases.versionOf(agent, input.versionId);
      const workflow = await validForPublishing(agent, source, "rolled back to");
      const before = livePublishedVersion(await resource.versionsOf(agent._id));
      const rolledBack = await resource.insertVersion(principal, agent, (head) => ({
        ...head,
        agentId: agent._id,
        status: "published" as const,
        workflow,
        updatedAt: head.createdAt,
        publishedAt: head.createdAt,
      }));
      await recordPublish(deps, principal, "agent", agent, rolledBack, before, rolledBack.createdAt);
      return cases.viewOf({ ...agent, updatedAt: rolledBack.createdAt });
    },
  };
}
