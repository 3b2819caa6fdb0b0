import { DomainError, type FieldIssue, failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { PRODUCTION } from "@kiln/kit/labels";
import type { Principal } from "@kiln/kit/principal";
import { SCOPES } from "./access.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { Issues } from "./domain/issues.js";
import { isJsonObject, type JsonObject, type JsonValue, parseJsonText } from "./domain/json-schema.js";
import { byVersionAscending, LIVE_PUBLISHED_SORT, latestVersion, livePublishedVersion } from "./domain/versions.js";
import {
  checkWorkflow,
  type ParsedWorkflow,
  parseWorkflow,
  pinWorkflow,
  REF_KEYS,
  sortIssues,
  type WorkflowIssue,
} from "./domain/workflow.js";
import type { AgentDoc, AgentVersionDoc } from "./store/catalog-store.js";
import { diffVersions, type VersionDiffView, versionIdRequired } from "./versioned/diff.js";
import { claimDraftSlot } from "./versioned/draft-slot.js";
import { recordPublish } from "./versioned/label-moves.js";
import { alreadyPublished, checkDescription, metadataChanges, versionedResource } from "./versioned/resource.js";
import { insertNextVersion, wholeVersion, wholeVersions } from "./versioned/version-store.js";

/** An agent with its versions (oldest first) and the version its `workflow` describes. */
export interface AgentView {
  agent: AgentDoc;
  versions: AgentVersionDoc[];
  draftVersionId: string | null;
  publishedVersionId: string | null;
  /** The version asked for, else the draft, else the live published one. */
  described: AgentVersionDoc;
}

export interface WorkflowValidation {
  valid: boolean;
  errors: WorkflowIssue[];
  warnings: WorkflowIssue[];
}

/** The empty workflow of a new agent's first draft. */
export const EMPTY_WORKFLOW = "{}";

export function agentView(agent: AgentDoc, versions: AgentVersionDoc[], versionId = ""): AgentView {
  const sorted = [...versions].sort(byVersionAscending);
  const draft = sorted.find((v) => v.status === "draft");
  const published = livePublishedVersion(sorted);
  let described = draft ?? published ?? latestVersion(sorted);
  if (versionId !== "") {
    described = sorted.find((v) => v._id === versionId);
    if (!described) throw notFound("agent version");
  }
  // Every agent is created with version 1.
  if (!described) throw new Error(`agent ${agent._id} has no version`);
  return {
    agent,
    versions: sorted,
    draftVersionId: draft?._id ?? null,
    publishedVersionId: published?._id ?? null,
    described,
  };
}

/** The document an agent version diff compares (api.md "Version diffs"): `/workflow/...` paths. */
export function agentVersionDocument(v: AgentVersionDoc): JsonObject {
  return { workflow: JSON.parse(v.workflow) as JsonValue };
}

/** Workflow findings as error details: `workflow.<path>` with the message and code. */
export function workflowDetails(issues: readonly WorkflowIssue[]): FieldIssue[] {
  return issues.map((i) => ({
    field: i.path === "" ? "workflow" : `workflow.${i.path}`,
    issue: `${i.message} (${i.code})`,
  }));
}

function publishedVersionRefused(version: AgentVersionDoc): DomainError {
  return failedPrecondition(`agent version ${version.version} is published and cannot change; create a new version`, [
    { field: "agentVersionId", issue: "is published" },
  ]);
}

export type WorkflowValidator = ReturnType<typeof createWorkflowValidator>;

/**
 * Validates a workflow for an organization: the pure checks of domain/workflow.ts plus its
 * references, looked up in the catalog's own collections. A reference of another organization is
 * reported exactly like a missing one. `pins` holds, by step index, the version a reference
 * without one pins now: the live published prompt or skill version, the tool's current version.
 */
export function createWorkflowValidator(deps: CatalogDeps) {
  const c = deps.collections;

  async function referenceIssues(
    organizationId: string,
    workflow: ParsedWorkflow,
  ): Promise<{ errors: WorkflowIssue[]; pins: Map<number, string> }> {
    const errors: WorkflowIssue[] = [];
    const pins = new Map<number, string>();
    await Promise.all(
      workflow.steps.map(async (step) => {
        const keys = REF_KEYS[step.type];
        const at = `steps[${step.index}].ref`;
        const idAt = `${at}.${keys.id}`;
        const versionAt = `${at}.${keys.version}`;
        const { id, versionId } = step.ref;
        const unknown = (path: string, what: string) =>
          errors.push({ path, code: "unknown_reference", message: `${what} does not exist` });
        const unpublished = (path: string, message: string) =>
          errors.push({ path, code: "unpublished_reference", message });
        if (step.type === "prompt") {
          const prompt = await c.prompts.findOne({ _id: id });
          if (!prompt || prompt.organizationId !== organizationId) return unknown(idAt, `prompt ${id}`);
          if (versionId !== undefined) {
            const v = await c.promptVersions.findOne({ _id: versionId, promptId: id });
            if (!v) return unknown(versionAt, `prompt version ${versionId}`);
            if (v.status !== "published") return unpublished(versionAt, `prompt version ${v.version} is not published`);
            return;
          }
          const [live] = await c.promptVersions.find(
            { promptId: id, status: "published" },
            { sort: LIVE_PUBLISHED_SORT, limit: 1 },
          );
          if (!live) return unpublished(idAt, `prompt "${prompt.name}" has no published version`);
          pins.set(step.index, live._id);
        } else if (step.type === "skill") {
          const skill = await c.skills.findOne({ _id: id });
          if (!skill || skill.organizationId !== organizationId) return unknown(idAt, `skill ${id}`);
          if (versionId !== undefined) {
            const v = await c.skillVersions.findOne({ _id: versionId, skillId: id });
            if (!v) return unknown(versionAt, `skill version ${versionId}`);
            if (v.status !== "published") return unpublished(versionAt, `skill version ${v.version} is not published`);
            return;
          }
          const [live] = await c.skillVersions.find(
            { skillId: id, status: "published" },
            { sort: LIVE_PUBLISHED_SORT, limit: 1 },
          );
          if (!live) return unpublished(idAt, `skill "${skill.name}" has no published version`);
          pins.set(step.index, live._id);
        } else {
          const tool = await c.tools.findOne({ _id: id });
          if (!tool || tool.organizationId !== organizationId) return unknown(idAt, `tool ${id}`);
          if (versionId !== undefined) {
            const v = await c.toolVersions.findOne({ _id: versionId, toolId: id });
            if (!v) return unknown(versionAt, `tool version ${versionId}`);
            return;
          }
          const current = await c.toolVersions.findOne({ toolId: id }, { sort: { version: -1 } });
          if (!current) return unknown(idAt, `tool ${id}`);
          pins.set(step.index, current._id);
        }
      }),
    );
    return { errors, pins };
  }

  return {
    /** Every finding about `value` (any JSON) in `organizationId`, and the pinned workflow when valid. */
    async validate(
      organizationId: string,
      value: unknown,
    ): Promise<WorkflowValidation & { pinned: JsonObject | undefined }> {
      const checked = checkWorkflow(value);
      const refs = await referenceIssues(organizationId, checked.workflow);
      const errors = sortIssues([...checked.errors, ...refs.errors]);
      const valid = errors.length === 0;
      return {
        valid,
        errors,
        warnings: checked.warnings,
        pinned: valid && isJsonObject(value) ? pinWorkflow(value, refs.pins) : undefined,
      };
    },
  };
}

export type Agents = ReturnType<typeof createAgents>;

/** The agent authoring use cases (spec §2 "Agent", §9 rule 3; api.md "Agents"). */
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

  const versionsOf = resource.versionsOf;
  /** The view with the version it describes read whole (versionsOf reads summaries). */
  const whole = (view: AgentView) => wholeVersion(c.agentVersions, view, "described");

  const touch = resource.touch;

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
      // Version and slot first: a visible agent always has its version.
      await c.agentVersions.insertOne(version);
      await c.agentDraftSlots.insertOne({ _id: agent._id, versionId: version._id, createdAt: at });
      await c.agents.insertOne(agent);
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
      const before = livePublishedVersion(await versionsOf(agent._id));
      const at = deps.now();
      const published = await c.agentVersions.findOneAndUpdate(
        { _id: version._id, status: "draft", workflow: version.workflow },
        { $set: { status: "published", workflow, publishedAt: at, updatedAt: at } },
      );
      if (!published) {
        const now = await c.agentVersions.findOne({ _id: version._id });
        if (now?.status === "published") throw alreadyPublished("agent", version);
        throw new DomainError("unavailable", "the workflow changed while it was being published; retry");
      }
      await c.agentDraftSlots.deleteOne({ _id: agent._id, versionId: version._id });
      await touch(agent._id, at);
      await recordPublish(deps, principal, "agent", agent, version, before, at);
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
