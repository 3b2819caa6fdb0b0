/**
 * What the execution service runs: a prompt version or a skill version with everything it pins
 * (prompt versions, tool versions) read in a few batched queries. This is the hot path of every
 * run, so each call reads each collection at most once, in parallel where it can, and immutable
 * version documents come from the `VersionCache` (see version-cache.ts for what is cached).
 */
import { DomainError, type FieldIssue, failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import { LATEST, PRODUCTION } from "@kiln/kit/labels";
import type { Principal } from "@kiln/kit/principal";
import type { Collection } from "@kiln/kit/store";
import { SCOPES } from "./access.js";
import { createWorkflowValidator, workflowDetails } from "./agents.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { fieldPath, Issues } from "./domain/issues.js";
import type { ToolPin } from "./domain/tool-pins.js";
import { LIVE_PUBLISHED_SORT } from "./domain/versions.js";
import { parseWorkflow, type StepType } from "./domain/workflow.js";
import type {
  AgentVersionDoc,
  CompositionStepDoc,
  LabelKind,
  PromptDoc,
  PromptVersionDoc,
  SkillVersionDoc,
  ToolDoc,
  ToolVersionDoc,
} from "./store/catalog-store.js";
import { type ImmutableVersion, VersionCache } from "./version-cache.js";
import { labelId } from "./versioned/label-moves.js";

/** An attached tool at its pinned version; `description` is the tool's current one. */
export interface ResolvedToolView {
  pin: ToolPin;
  description: string;
  version: ToolVersionDoc;
}

export interface ResolvedPromptView {
  version: PromptVersionDoc;
  /** The prompt's current name. */
  promptName: string;
  /** The version's own tools, in the order it pins them. */
  tools: ResolvedToolView[];
}

export interface ResolvedSkillView {
  version: SkillVersionDoc;
  /** The composition in order, each step with its pinned prompt version resolved. */
  steps: { step: CompositionStepDoc; prompt: ResolvedPromptView }[];
  /** The skill version's own tools, offered to every step besides the step's prompt tools. */
  tools: ResolvedToolView[];
}

export interface ResolvedAgentStepView {
  stepId: string;
  type: StepType;
  prompt?: ResolvedPromptView;
  skill?: ResolvedSkillView;
  tool?: ResolvedToolView;
}

export interface ResolvedAgentView {
  /** Its workflow has every reference pinned (a draft's pinned at resolve time). */
  version: AgentVersionDoc;
  /** One per workflow step, in the order of `steps`. */
  steps: ResolvedAgentStepView[];
}

/**
 * Runs `p` to its end without rejecting, so an authorization failure awaited beside it always
 * wins over what `p` found (a missing resource must not be told apart from a forbidden one).
 */
function settle<T>(p: Promise<T>): Promise<() => T> {
  return p.then(
    (value) => () => value,
    (e: unknown) => () => {
      throw e;
    },
  );
}

interface LoadedTools {
  versions: Map<string, ToolVersionDoc>;
  tools: Map<string, ToolDoc>;
}

const NO_TOOLS: LoadedTools = { versions: new Map(), tools: new Map() };

const unique = (values: Iterable<string>) => [...new Set(values)];

/** A run names a version, or a label, not both. */
function oneOf(input: { versionId: string; label?: string }): void {
  if (input.versionId !== "" && (input.label ?? "") !== "") {
    throw invalidArgument("name a version or a label, not both", [
      { field: "label", issue: "cannot be given with versionId" },
    ]);
  }
}

function requireFields(fields: Record<string, string>): void {
  const issues = new Issues();
  for (const [field, value] of Object.entries(fields)) if (value === "") issues.add(field, "is required");
  issues.throwIfAny();
}

export type Resolver = ReturnType<typeof createResolver>;

/**
 * The resolve use cases of the execution service. The caller is the end user (or API key) the
 * run is for, authorized with `runs:write` in the run request's organization; the resource must
 * belong to that organization, otherwise it is not found, exactly as if it did not exist.
 */
export function createResolver(deps: CatalogDeps, cache: VersionCache = new VersionCache()) {
  const c = deps.collections;
  const workflows = createWorkflowValidator(deps);

  /** Version documents by id: cached ones from the cache, the rest with one query. */
  async function versionsById<T extends ImmutableVersion>(
    collection: Collection<T>,
    ids: Iterable<string>,
  ): Promise<Map<string, T>> {
    const found = new Map<string, T>();
    const missing: string[] = [];
    for (const id of unique(ids)) {
      const hit = cache.get<T>(collection.name, id);
      if (hit) found.set(id, hit);
      else missing.push(id);
    }
    if (missing.length > 0) {
      for (const doc of await collection.find({ _id: { $in: missing } })) {
        cache.remember(collection.name, doc);
        found.set(doc._id, doc);
      }
    }
    return found;
  }

  /** The live published version of a parent, with one query that reads only that version. */
  async function livePublished<T extends PromptVersionDoc | SkillVersionDoc>(
    collection: Collection<T>,
    parent: { promptId: string } | { skillId: string },
  ): Promise<T | undefined> {
    const [live] = await collection.find({ ...parent, status: "published" }, { sort: LIVE_PUBLISHED_SORT, limit: 1 });
    if (live) cache.remember(collection.name, live);
    return live;
  }

  /**
   * The version a label other than production points at, or null when there is no such label
   * (the caller says so once it knows the parent is visible). `latest` is the newest version.
   */
  async function labelTarget(kind: LabelKind, parentId: string, label: string): Promise<string | null> {
    if (label === LATEST) {
      const collection = { prompt: c.promptVersions, skill: c.skillVersions, agent: c.agentVersions }[
        kind
      ] as Collection<{
        _id: string;
        version: number;
      }>;
      const field = { prompt: "promptId", skill: "skillId", agent: "agentId" }[kind];
      const [latest] = await collection.find({ [field]: parentId }, { sort: { version: -1 }, limit: 1 });
      return latest?._id ?? null;
    }
    const doc = await c.labels.findOne({ _id: labelId(kind, parentId, label) });
    return doc?.versionId ?? null;
  }

  /** The pinned tool versions (cached or one query) and their tools (one query), in parallel. */
  async function loadTools(pins: readonly ToolPin[]): Promise<LoadedTools> {
    if (pins.length === 0) return NO_TOOLS;
    const [versions, tools] = await Promise.all([
      versionsById(
        c.toolVersions,
        pins.map((p) => p.toolVersionId),
      ),
      c.tools.find({ _id: { $in: unique(pins.map((p) => p.toolId)) } }),
    ]);
    return { versions, tools: new Map(tools.map((t) => [t._id, t])) };
  }

  function toolsOf(
    pins: readonly ToolPin[],
    loaded: LoadedTools,
    organizationId: string,
    field: string,
    problems: FieldIssue[],
  ): ResolvedToolView[] {
    const resolved: ResolvedToolView[] = [];
    pins.forEach((pin, i) => {
      const version = loaded.versions.get(pin.toolVersionId);
      const tool = loaded.tools.get(pin.toolId);
      if (
        !version ||
        !tool ||
        version.toolId !== pin.toolId ||
        version.organizationId !== organizationId ||
        tool.organizationId !== organizationId
      ) {
        problems.push({
          field: fieldPath(fieldPath(field, i), "toolVersionId"),
          issue: `tool version ${pin.toolVersionId} no longer exists`,
        });
      } else resolved.push({ pin, description: tool.description, version });
    });
    return resolved;
  }

  function unresolvable(what: string, problems: FieldIssue[]) {
    problems.sort((a, b) => a.field.localeCompare(b.field, "en", { numeric: true }));
    return failedPrecondition(`${what} does not resolve: something it pins no longer exists`, problems);
  }

  /** A skill version's prompt versions and every tool it or they pin. */
  async function loadComposition(version: SkillVersionDoc) {
    const steps = version.promptComposition;
    if (steps.length === 0) {
      const none = { promptVersions: new Map<string, PromptVersionDoc>(), prompts: new Map<string, PromptDoc>() };
      return { ...none, tools: await loadTools(version.tools) };
    }
    const [prompts, { promptVersions, tools }] = await Promise.all([
      c.prompts.find({ _id: { $in: unique(steps.map((s) => s.promptId)) } }),
      versionsById(
        c.promptVersions,
        steps.map((s) => s.promptVersionId),
      ).then(async (promptVersions) => ({
        promptVersions,
        tools: await loadTools([...version.tools, ...[...promptVersions.values()].flatMap((pv) => pv.tools)]),
      })),
    ]);
    return { promptVersions, prompts: new Map(prompts.map((p) => [p._id, p])), tools };
  }

  async function selectSkillVersion(input: {
    skillId: string;
    versionId: string;
    preferDraft: boolean;
    liveVersionId?: string;
  }): Promise<SkillVersionDoc | undefined> {
    const named = input.versionId || input.liveVersionId;
    if (named) {
      const found = (await versionsById(c.skillVersions, [named])).get(named);
      return found?.skillId === input.skillId ? found : undefined;
    }
    const [draft, published] = await Promise.all([
      input.preferDraft
        ? c.skillVersions.findOne({ skillId: input.skillId, status: "draft" }, { sort: { version: -1 } })
        : null,
      livePublished(c.skillVersions, { skillId: input.skillId }),
    ]);
    return draft ?? published;
  }

  async function loadPrompt(input: {
    organizationId: string;
    promptId: string;
    versionId: string;
    label?: string;
  }): Promise<ResolvedPromptView> {
    const organizationId = input.organizationId;
    const label = input.label ?? "";
    const viaLabel = label !== "" && label !== PRODUCTION;
    const wantsLive = input.versionId === "" && !viaLabel;
    const stamp = deps.live.stamp();
    const cached = wantsLive ? deps.live.prompt(input.promptId) : undefined;
    const labelled = viaLabel ? await labelTarget("prompt", input.promptId, label) : null;
    // The version asked for, else the cached live one; without either, a query finds the live one.
    const named = input.versionId || labelled || cached?.versionId;
    const [prompt, { version, tools }] = await Promise.all([
      cached ? cached.parent : c.prompts.findOne({ _id: input.promptId }),
      (named
        ? versionsById(c.promptVersions, [named]).then((found) => found.get(named))
        : livePublished(c.promptVersions, { promptId: input.promptId })
      ).then(async (v) => {
        // Tools are read only for a version that can be answered.
        const answerable =
          (!viaLabel || labelled !== null) && v?.promptId === input.promptId && v.organizationId === organizationId;
        return { version: answerable ? v : undefined, tools: answerable ? await loadTools(v.tools) : NO_TOOLS };
      }),
    ]);
    if (!prompt || prompt.organizationId !== organizationId) throw notFound("prompt");
    if (!version) {
      if (label !== "") throw notFound(`label ${label}`);
      if (input.versionId !== "") throw notFound("prompt version");
      throw failedPrecondition("prompt has no published version", [
        { field: "versionId", issue: "is required: the prompt has no published version" },
      ]);
    }
    const problems: FieldIssue[] = [];
    const resolved = toolsOf(version.tools, tools, organizationId, "tools", problems);
    if (problems.length > 0) throw unresolvable(`prompt version ${version.version}`, problems);
    if (wantsLive && !cached) deps.live.rememberPrompt(prompt, version._id, stamp);
    return { version, promptName: prompt.name, tools: resolved };
  }

  async function loadSkill(input: {
    organizationId: string;
    skillId: string;
    versionId: string;
    preferDraft: boolean;
    label?: string;
  }): Promise<ResolvedSkillView> {
    const organizationId = input.organizationId;
    const label = input.label ?? "";
    const viaLabel = label !== "" && label !== PRODUCTION;
    // Runs of the live version (not previews, which prefer the draft) may use the live cache.
    const wantsLive = input.versionId === "" && !input.preferDraft && !viaLabel;
    const stamp = deps.live.stamp();
    const cached = wantsLive ? deps.live.skill(input.skillId) : undefined;
    const labelled = viaLabel ? await labelTarget("skill", input.skillId, label) : null;
    const [skill, selected] = await Promise.all([
      cached ? cached.parent : c.skills.findOne({ _id: input.skillId }),
      (viaLabel && labelled === null
        ? Promise.resolve(undefined)
        : selectSkillVersion({
            ...input,
            versionId: input.versionId || (labelled ?? ""),
            preferDraft: input.preferDraft && label === "",
            liveVersionId: cached?.versionId,
          })
      ).then(async (version) =>
        version && version.organizationId === organizationId
          ? { version, ...(await loadComposition(version)) }
          : undefined,
      ),
    ]);
    if (!skill || skill.organizationId !== organizationId) throw notFound("skill");
    if (!selected) {
      if (label !== "") throw notFound(`label ${label}`);
      if (input.versionId !== "") throw notFound("skill version");
      throw failedPrecondition("skill has no published version", [
        { field: "versionId", issue: "is required: the skill has no published version" },
      ]);
    }
    const { version, promptVersions, prompts } = selected;
    const problems: FieldIssue[] = [];
    // Stored in order (`order` is the index + 1).
    const steps = version.promptComposition.flatMap((step, i) => {
      const at = fieldPath("promptComposition", i);
      const pv = promptVersions.get(step.promptVersionId);
      const prompt = prompts.get(step.promptId);
      if (!pv || pv.promptId !== step.promptId || pv.organizationId !== organizationId) {
        problems.push({
          field: fieldPath(at, "promptVersionId"),
          issue: `prompt version ${step.promptVersionId} no longer exists`,
        });
        return [];
      }
      if (!prompt || prompt.organizationId !== organizationId) {
        problems.push({ field: fieldPath(at, "promptId"), issue: `prompt ${step.promptId} no longer exists` });
        return [];
      }
      const tools = toolsOf(pv.tools, selected.tools, organizationId, fieldPath(at, "tools"), problems);
      return [{ step, prompt: { version: pv, promptName: prompt.name, tools } }];
    });
    const tools = toolsOf(version.tools, selected.tools, organizationId, "tools", problems);
    if (problems.length > 0) throw unresolvable(`skill version ${version.version}`, problems);
    // Without versionId or preferDraft the version selected is the live published one.
    if (wantsLive && !cached) deps.live.rememberSkill(skill, version._id, stamp);
    return { version, steps, tools };
  }

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

  async function loadAgent(input: {
    organizationId: string;
    agentId: string;
    versionId: string;
    label?: string;
  }): Promise<ResolvedAgentView> {
    const organizationId = input.organizationId;
    const label = input.label ?? "";
    const viaLabel = label !== "" && label !== PRODUCTION;
    const labelled = viaLabel ? await labelTarget("agent", input.agentId, label) : null;
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
    if (!selected || selected.organizationId !== organizationId) {
      if (label !== "") throw notFound(`label ${label}`);
      if (input.versionId !== "") throw notFound("agent version");
      throw failedPrecondition("agent has no published version", [
        { field: "versionId", issue: "is required: the agent has no published version" },
      ]);
    }
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

  return {
    /**
     * `versionId` names any version of the prompt, draft or published (api.md: the run "uses the
     * published version unless versionId is given"); without it the live published version, and
     * none is failed_precondition (409).
     */
    async resolvePromptVersion(
      principal: Principal,
      input: { organizationId: string; promptId: string; versionId: string; label?: string },
    ): Promise<ResolvedPromptView> {
      requireFields({ organizationId: input.organizationId, promptId: input.promptId });
      oneOf(input);
      const [, loaded] = await Promise.all([
        deps.access.onResource(principal, input.organizationId, SCOPES.runsWrite, "prompt"),
        settle(loadPrompt(input)),
      ]);
      return loaded();
    },

    /**
     * `versionId` names any version of the skill; without it, with `preferDraft` (previews) the
     * draft if there is one, else the live published version; none is failed_precondition (409).
     * A composition whose prompt or tool versions no longer resolve is failed_precondition with
     * the offending fields in the details.
     */
    async resolveSkillVersion(
      principal: Principal,
      input: { organizationId: string; skillId: string; versionId: string; preferDraft: boolean; label?: string },
    ): Promise<ResolvedSkillView> {
      requireFields({ organizationId: input.organizationId, skillId: input.skillId });
      oneOf(input);
      const [, loaded] = await Promise.all([
        deps.access.onResource(principal, input.organizationId, SCOPES.runsWrite, "skill"),
        settle(loadSkill(input)),
      ]);
      return loaded();
    },

    /**
     * An agent version (default: the live published one; `versionId` names any version) with its
     * workflow's references pinned and resolved, step by step, as resolvePromptVersion,
     * resolveSkillVersion and the tool pins resolve them. A published version's workflow was
     * validated and pinned when it was published; a draft is validated now (an invalid one is
     * failed_precondition with the findings in `details`) and its unpinned references are pinned
     * to what is published now, in the answered `workflow` too.
     */
    async resolveAgentVersion(
      principal: Principal,
      input: { organizationId: string; agentId: string; versionId: string; label?: string },
    ): Promise<ResolvedAgentView> {
      requireFields({ organizationId: input.organizationId, agentId: input.agentId });
      oneOf(input);
      const [, loaded] = await Promise.all([
        deps.access.onResource(principal, input.organizationId, SCOPES.runsWrite, "agent"),
        settle(loadAgent(input)),
      ]);
      return loaded();
    },
  };
}
