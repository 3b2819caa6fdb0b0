import { PRODUCTION } from "@kiln/contracts/labels";
import { DomainError, failedPrecondition, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import type { Principal } from "@kiln/kit/principal";
import { SCOPES } from "./access.js";
import { type AgentView, agentVersionDocument, agentView, EMPTY_WORKFLOW } from "./agent-view.js";
import { createAgentWorkflowCases } from "./agent-workflow-cases.js";
import { createWorkflowValidator, type WorkflowValidator, workflowDetails } from "./agent-workflow-validator.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { Issues } from "./domain/issues.js";
import { livePublishedVersion } from "./domain/versions.js";
import type { AgentDoc, AgentVersionDoc } from "./store/catalog-store.js";
import { diffVersions, type VersionDiffView, versionIdRequired } from "./versioned/diff.js";
import { claimDraftSlot } from "./versioned/draft-slot.js";
import { recordPublish } from "./versioned/label-moves.js";
import { commitPublish, insertWithFirstVersion, type PublishingFamily } from "./versioned/publish.js";
import { alreadyPublished, checkDescription, metadataChanges, versionedResource } from "./versioned/resource.js";
import { insertNextVersion, wholeVersion, wholeVersions } from "./versioned/version-store.js";

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
  const c = deps.collections;
  type AgentScope = typeof SCOPES.agentsRead | typeof SCOPES.agentsWrite;

  const resource = versionedResource(deps, {
    noun: "agent",
    parents: c.agents,
    versions: c.agentVersions,
    parentField: "agentId",
    parentOf: (v) => v.agentId,
  });
  const slots = { noun: "agent", slots: c.agentDraftSlots, versions: c.agentVersions };
  const agentFor = (principal: Principal, id: string, scope: AgentScope): Promise<AgentDoc> =>
    resource.parentFor(principal, id, scope);

  const versionsOf = resource.versionsOf;
  /** The view with the version it describes read whole (versionsOf reads summaries). */
  const whole = (view: AgentView) => wholeVersion(c.agentVersions, view, "described");

  const touch = resource.touch;
  const publishing: PublishingFamily<AgentVersionDoc> = {
    kind: "agent",
    versions: c.agentVersions,
    versionsOf,
    touch,
    draftSlots: c.agentDraftSlots,
  };

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
    ...createAgentWorkflowCases(deps, validator, touch),

    /** An agent with an empty draft version 1 (workflow `{}`). */
    async createAgent(principal: Principal, input: { organizationId: string; name: string; description: string }) {
      await deps.access.inOrganization(principal, input.organizationId, SCOPES.agentsWrite);
      const issues = new Issues();
      const name = issues.text("name", input.name);
      const description = checkDescription(issues, input.description);
      issues.throwIfAny();
      const at = deps.now();
      const agent: AgentDoc = {
        _id: newId("agt"),
        organizationId: input.organizationId,
        name,
        description,
        createdAt: at,
        updatedAt: at,
      };
      const version: AgentVersionDoc = {
        _id: newId("av"),
        agentId: agent._id,
        organizationId: agent.organizationId,
        version: 1,
        status: "draft",
        workflow: EMPTY_WORKFLOW,
        createdAt: at,
        updatedAt: at,
        publishedAt: null,
      };
      await insertWithFirstVersion(
        { parents: c.agents, versions: c.agentVersions, draftSlots: c.agentDraftSlots },
        agent,
        version,
        at,
      );
      return agentView(agent, [version]);
    },

    async getAgent(principal: Principal, input: { id: string; versionId: string }): Promise<AgentView> {
      const agent = await agentFor(principal, input.id, SCOPES.agentsRead);
      return whole(agentView(agent, await versionsOf(agent._id), input.versionId));
    },

    async listAgents(principal: Principal, input: { organizationId: string; limit: number; cursor: string }) {
      const page = await resource.page(principal, input, SCOPES.agentsRead);
      const views = page.items.map(({ parent, versions }) => agentView(parent, versions));
      return { items: await wholeVersions(c.agentVersions, views, "described"), nextCursor: page.nextCursor };
    },

    async updateAgent(principal: Principal, input: { id: string; name?: string; description?: string }) {
      const agent = await agentFor(principal, input.id, SCOPES.agentsWrite);
      const issues = new Issues();
      const set = metadataChanges(issues, input);
      issues.throwIfAny();
      const updated = await resource.applyChanges(agent, set);
      return whole(agentView(updated, await versionsOf(agent._id)));
    },

    /** A new draft copied from `fromVersionId` (default: the latest); at most one draft per agent. */
    async createAgentVersion(principal: Principal, input: { agentId: string; fromVersionId: string }) {
      const agent = await agentFor(principal, input.agentId, SCOPES.agentsWrite);
      const source =
        input.fromVersionId === ""
          ? await c.agentVersions.findOne({ agentId: agent._id }, { sort: { version: -1 } })
          : await c.agentVersions.findOne({ _id: input.fromVersionId, agentId: agent._id });
      if (!source) throw notFound("agent version");
      const id = newId("av");
      await claimDraftSlot(deps, slots, agent._id, id);
      const at = deps.now();
      try {
        const version = await insertNextVersion(c.agentVersions, { agentId: agent._id }, (n) => ({
          _id: id,
          agentId: agent._id,
          organizationId: agent.organizationId,
          version: n,
          status: "draft" as const,
          workflow: source.workflow,
          createdAt: at,
          updatedAt: at,
          publishedAt: null,
        }));
        await touch(agent._id, at);
        return version;
      } catch (e) {
        await c.agentDraftSlots.deleteOne({ _id: agent._id, versionId: id });
        throw e;
      }
    },

    /**
     * Publishes a draft (default: the agent's draft) whose workflow is valid, with every reference
     * without a version pinned to the version published now; the draft slot is released.
     */
    async publishAgentVersion(principal: Principal, input: { agentId: string; versionId: string }): Promise<AgentView> {
      const agent = await agentFor(principal, input.agentId, SCOPES.agentsWrite);
      // Publishing moves the production label (docs/labels.md).
      await deps.access.moveLabel(principal, agent.organizationId, SCOPES.agentsWrite, "agent", PRODUCTION);
      const version =
        input.versionId === ""
          ? await c.agentVersions.findOne({ agentId: agent._id, status: "draft" })
          : await c.agentVersions.findOne({ _id: input.versionId, agentId: agent._id });
      if (!version && input.versionId !== "") throw notFound("agent version");
      if (!version) {
        throw failedPrecondition("the agent has no draft version to publish", [
          { field: "versionId", issue: "no draft exists" },
        ]);
      }
      if (version.status === "published") throw alreadyPublished("agent", version);
      const workflow = await validForPublishing(agent, version, "published");
      const at = await commitPublish(deps, principal, publishing, agent, version, {
        filter: { workflow: version.workflow },
        set: { workflow },
        lost: async () => {
          const now = await c.agentVersions.findOne({ _id: version._id });
          if (now?.status === "published") return alreadyPublished("agent", version);
          return new DomainError("unavailable", "the workflow changed while it was being published; retry");
        },
      });
      return whole(agentView({ ...agent, updatedAt: at }, await versionsOf(agent._id)));
    },

    async diffAgentVersions(
      principal: Principal,
      input: { agentId: string; versionId: string; againstVersionId: string },
    ): Promise<VersionDiffView> {
      const agent = await agentFor(principal, input.agentId, SCOPES.agentsRead);
      return diffVersions(
        { versions: c.agentVersions, parentField: "agentId", noun: "agent version", document: agentVersionDocument },
        agent._id,
        input,
      );
    },

    /**
     * A new version copying `versionId`'s workflow, validated like publish and published in one
     * insert (it is never a draft, so the draft slot is untouched); history is never rewritten.
     */
    async rollbackAgentVersion(principal: Principal, input: { agentId: string; versionId: string }) {
      const agent = await agentFor(principal, input.agentId, SCOPES.agentsWrite);
      // A rollback publishes, so it moves the production label (docs/labels.md).
      await deps.access.moveLabel(principal, agent.organizationId, SCOPES.agentsWrite, "agent", PRODUCTION);
      versionIdRequired(input.versionId);
      const source = await c.agentVersions.findOne({ _id: input.versionId, agentId: agent._id });
      if (!source) throw notFound("agent version");
      const workflow = await validForPublishing(agent, source, "rolled back to");
      const before = livePublishedVersion(await versionsOf(agent._id));
      const at = deps.now();
      const rolledBack = await insertNextVersion(c.agentVersions, { agentId: agent._id }, (n) => ({
        _id: newId("av"),
        agentId: agent._id,
        organizationId: agent.organizationId,
        version: n,
        status: "published" as const,
        workflow,
        createdAt: at,
        updatedAt: at,
        publishedAt: at,
      }));
      await touch(agent._id, at);
      await recordPublish(deps, principal, "agent", agent, rolledBack, before, at);
      return whole(agentView({ ...agent, updatedAt: at }, await versionsOf(agent._id)));
    },
  };
}
