import { DomainError, type FieldIssue, failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { PRODUCTION } from "@kiln/kit/labels";
import type { Principal } from "@kiln/kit/principal";
import { SCOPES } from "./access.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { fieldPath, Issues } from "./domain/issues.js";
import { isJsonObject, type JsonObject, parseJsonText } from "./domain/json-schema.js";
import { parseResponseFormat } from "./domain/prompt-version.js";
import {
  checkAliases,
  checkBindings,
  deriveSkillSchemas,
  MAX_STEPS,
  type StepContract,
} from "./domain/skill-composition.js";
import { checkDistinctToolKeys, conflictingPin, type ToolPin } from "./domain/tool-pins.js";
import { byVersionAscending, latestVersion, livePublishedVersion } from "./domain/versions.js";
import type { CompositionStepDoc, PromptVersionDoc, SkillDoc, SkillVersionDoc } from "./store/catalog-store.js";
import { resolveToolPins, type ToolSelector } from "./tools.js";
import { diffVersions, type VersionDiffView } from "./versioned/diff.js";
import { claimDraftSlot } from "./versioned/draft-slot.js";
import { recordPublish } from "./versioned/label-moves.js";
import { alreadyPublished, checkDescription, metadataChanges, versionedResource } from "./versioned/resource.js";
import { insertNextVersion, wholeVersion, wholeVersions } from "./versioned/version-store.js";

/** A skill with its versions (oldest first) and the version its composition fields describe. */
export interface SkillView {
  skill: SkillDoc;
  versions: SkillVersionDoc[];
  draftVersionId: string | null;
  publishedVersionId: string | null;
  /** The version asked for, else the draft, else the live published one. */
  described: SkillVersionDoc;
}

export interface PromptSelector {
  promptId: string;
  promptVersionId?: string;
  alias?: string;
  variablesJson?: string;
}

const EMPTY_SCHEMAS = deriveSkillSchemas([]);

export function skillView(skill: SkillDoc, versions: SkillVersionDoc[], versionId = ""): SkillView {
  const sorted = [...versions].sort(byVersionAscending);
  const draft = sorted.find((v) => v.status === "draft");
  const published = livePublishedVersion(sorted);
  let described = draft ?? published ?? latestVersion(sorted);
  if (versionId !== "") {
    described = sorted.find((v) => v._id === versionId);
    if (!described) throw notFound("skill version");
  }
  // Every skill is created with version 1.
  if (!described) throw new Error(`skill ${skill._id} has no version`);
  return {
    skill,
    versions: sorted,
    draftVersionId: draft?._id ?? null,
    publishedVersionId: published?._id ?? null,
    described,
  };
}

/** The document a skill version diff compares (api.md "Version diffs"). */
export function skillVersionDocument(v: SkillVersionDoc): JsonObject {
  return {
    promptComposition: v.promptComposition.map((s) => ({
      order: s.order,
      alias: s.alias,
      promptId: s.promptId,
      promptVersionId: s.promptVersionId,
      promptName: s.promptName,
      version: s.version,
      variables: JSON.parse(s.variables),
    })),
    tools: v.tools.map((t) => ({ toolId: t.toolId, toolVersionId: t.toolVersionId, toolKey: t.toolKey })),
    inputSchema: JSON.parse(v.inputSchema),
    outputSchema: JSON.parse(v.outputSchema),
  };
}

function publishedVersionRefused(version: SkillVersionDoc): DomainError {
  return failedPrecondition(`skill version ${version.version} is published and cannot change; create a new version`, [
    { field: "skillVersionId", issue: "is published" },
  ]);
}

export type Skills = ReturnType<typeof createSkills>;

/** The step contract of a pinned prompt version, for binding checks and derived schemas. */
export function contractOf(alias: string, variables: JsonObject, version: PromptVersionDoc): StepContract {
  return {
    alias,
    variables,
    variablesSchema: JSON.parse(version.variablesSchema) as JsonObject,
    responseFormat: parseResponseFormat(version.responseFormat),
  };
}

/** The skill use cases (spec §2 "Skill", api.md "Skills"). */
export function createSkills(deps: CatalogDeps) {
  const c = deps.collections;
  type SkillScope = typeof SCOPES.skillsRead | typeof SCOPES.skillsWrite;

  const resource = versionedResource(deps, {
    noun: "skill",
    parents: c.skills,
    versions: c.skillVersions,
    parentField: "skillId",
    parentOf: (v) => v.skillId,
  });
  const slots = { noun: "skill", slots: c.skillDraftSlots, versions: c.skillVersions };
  const skillFor = (principal: Principal, id: string, scope: SkillScope): Promise<SkillDoc> =>
    resource.parentFor(principal, id, scope);

  /** A draft version addressed by its own id (the replace routes). */
  async function draftFor(principal: Principal, versionId: string) {
    if (versionId === "") {
      throw invalidArgument("skillVersionId is required", [{ field: "skillVersionId", issue: "is required" }]);
    }
    const version = await c.skillVersions.findOne({ _id: versionId });
    if (!version) throw notFound("skill version");
    await deps.access.onResource(principal, version.organizationId, SCOPES.skillsWrite, "skill version");
    const skill = await c.skills.findOne({ _id: version.skillId });
    if (!skill) throw notFound("skill version");
    if (version.status === "published") throw publishedVersionRefused(version);
    return { skill, version };
  }

  const versionsOf = resource.versionsOf;
  /** The view with the version it describes read whole (versionsOf reads summaries). */
  const whole = (view: SkillView) => wholeVersion(c.skillVersions, view, "described");

  const touch = resource.touch;

  /** Steps whose prompt version pins a tool key that `tools` pins to another version. */
  function checkToolConflicts(
    issues: Issues,
    tools: readonly ToolPin[],
    steps: readonly { field: string; alias: string; promptTools: readonly ToolPin[] }[],
    side: "skill" | "prompt",
  ) {
    for (const step of steps) {
      const conflict = conflictingPin(step.promptTools, tools);
      if (!conflict) continue;
      const { pin, other } = conflict;
      if (side === "prompt") {
        issues.add(
          step.field,
          `its prompt version pins tool "${pin.toolKey}" to ${pin.toolVersionId}, but the skill's tools pin ${other.toolVersionId}`,
        );
      } else {
        const i = tools.indexOf(other);
        issues.add(
          fieldPath("tools", i),
          `pins tool "${other.toolKey}" to ${other.toolVersionId}, but step "${step.alias}" pins ${pin.toolVersionId}`,
        );
      }
    }
  }

  return {
    /** A skill with an empty draft version 1. */
    async createSkill(principal: Principal, input: { organizationId: string; name: string; description: string }) {
      await deps.access.inOrganization(principal, input.organizationId, SCOPES.skillsWrite);
      const issues = new Issues();
      const name = issues.text("name", input.name);
      const description = checkDescription(issues, input.description);
      issues.throwIfAny();
      const at = deps.now();
      const skill: SkillDoc = {
        _id: newId("skl"),
        organizationId: input.organizationId,
        name,
        description,
        createdAt: at,
        updatedAt: at,
      };
      const version: SkillVersionDoc = {
        _id: newId("sv"),
        skillId: skill._id,
        organizationId: skill.organizationId,
        version: 1,
        status: "draft",
        promptComposition: [],
        tools: [],
        inputSchema: JSON.stringify(EMPTY_SCHEMAS.inputSchema),
        outputSchema: JSON.stringify(EMPTY_SCHEMAS.outputSchema),
        createdAt: at,
        updatedAt: at,
        publishedAt: null,
      };
      // Version and slot first: a visible skill always has its version.
      await c.skillVersions.insertOne(version);
      await c.skillDraftSlots.insertOne({ _id: skill._id, versionId: version._id, createdAt: at });
      await c.skills.insertOne(skill);
      return skillView(skill, [version]);
    },

    async getSkill(principal: Principal, input: { id: string; versionId: string }): Promise<SkillView> {
      const skill = await skillFor(principal, input.id, SCOPES.skillsRead);
      return whole(skillView(skill, await versionsOf(skill._id), input.versionId));
    },

    async listSkills(principal: Principal, input: { organizationId: string; limit: number; cursor: string }) {
      const page = await resource.page(principal, input, SCOPES.skillsRead);
      const views = page.items.map(({ parent, versions }) => skillView(parent, versions));
      return { items: await wholeVersions(c.skillVersions, views, "described"), nextCursor: page.nextCursor };
    },

    async updateSkill(principal: Principal, input: { id: string; name?: string; description?: string }) {
      const skill = await skillFor(principal, input.id, SCOPES.skillsWrite);
      const issues = new Issues();
      const set = metadataChanges(issues, input);
      issues.throwIfAny();
      const updated = await resource.applyChanges(skill, set);
      deps.live.forgetSkill(skill._id);
      return whole(skillView(updated, await versionsOf(skill._id)));
    },

    /** A new draft copied from `fromVersionId` (default: the latest); at most one draft per skill. */
    async createSkillVersion(principal: Principal, input: { skillId: string; fromVersionId: string }) {
      const skill = await skillFor(principal, input.skillId, SCOPES.skillsWrite);
      const source =
        input.fromVersionId === ""
          ? await c.skillVersions.findOne({ skillId: skill._id }, { sort: { version: -1 } })
          : await c.skillVersions.findOne({ _id: input.fromVersionId, skillId: skill._id });
      if (!source) throw notFound("skill version");
      const id = newId("sv");
      await claimDraftSlot(deps, slots, skill._id, id);
      const at = deps.now();
      try {
        const version = await insertNextVersion(c.skillVersions, { skillId: skill._id }, (n) => ({
          _id: id,
          skillId: skill._id,
          organizationId: skill.organizationId,
          version: n,
          status: "draft" as const,
          promptComposition: source.promptComposition,
          tools: source.tools,
          inputSchema: source.inputSchema,
          outputSchema: source.outputSchema,
          createdAt: at,
          updatedAt: at,
          publishedAt: null,
        }));
        await touch(skill._id, at);
        return version;
      } catch (e) {
        await c.skillDraftSlots.deleteOne({ _id: skill._id, versionId: id });
        throw e;
      }
    },

    /**
     * Publishes a draft (default: the skill's draft) whose composition is not empty and still
     * resolves; the draft slot is released so a new draft can be made.
     */
    async publishSkillVersion(principal: Principal, input: { skillId: string; versionId: string }): Promise<SkillView> {
      const skill = await skillFor(principal, input.skillId, SCOPES.skillsWrite);
      // Publishing moves the production label (docs/labels.md).
      await deps.access.moveLabel(principal, skill.organizationId, SCOPES.skillsWrite, "skill", PRODUCTION);
      const version =
        input.versionId === ""
          ? await c.skillVersions.findOne({ skillId: skill._id, status: "draft" })
          : await c.skillVersions.findOne({ _id: input.versionId, skillId: skill._id });
      if (!version && input.versionId !== "") throw notFound("skill version");
      if (!version) {
        throw failedPrecondition("the skill has no draft version to publish", [
          { field: "versionId", issue: "no draft exists" },
        ]);
      }
      if (version.status === "published") throw alreadyPublished("skill", version);
      const problems: FieldIssue[] = [];
      if (version.promptComposition.length === 0) problems.push({ field: "promptComposition", issue: "is empty" });
      await Promise.all(
        version.promptComposition.map(async (step, i) => {
          const pv = await c.promptVersions.findOne({ _id: step.promptVersionId });
          const at = fieldPath(fieldPath("promptComposition", i), "promptVersionId");
          if (!pv || pv.organizationId !== skill.organizationId || pv.promptId !== step.promptId) {
            problems.push({ field: at, issue: "no longer exists" });
          } else if (pv.status !== "published") problems.push({ field: at, issue: "is not published" });
        }),
      );
      await Promise.all(
        version.tools.map(async (pin, i) => {
          const tv = await c.toolVersions.findOne({ _id: pin.toolVersionId, toolId: pin.toolId });
          if (!tv || tv.organizationId !== skill.organizationId) {
            problems.push({ field: fieldPath(fieldPath("tools", i), "toolVersionId"), issue: "no longer exists" });
          }
        }),
      );
      if (problems.length > 0) {
        problems.sort((a, b) => a.field.localeCompare(b.field));
        throw failedPrecondition(
          `skill version ${version.version} cannot be published: its composition does not resolve`,
          problems,
        );
      }
      const before = livePublishedVersion(await versionsOf(skill._id));
      const at = deps.now();
      const published = await c.skillVersions.findOneAndUpdate(
        { _id: version._id, status: "draft" },
        { $set: { status: "published", publishedAt: at, updatedAt: at } },
      );
      if (!published) throw alreadyPublished("skill", version);
      // Runs resolved by this replica see the new version from now on (live-version-cache.ts).
      deps.live.forgetSkill(skill._id);
      await c.skillDraftSlots.deleteOne({ _id: skill._id, versionId: version._id });
      await touch(skill._id, at);
      await recordPublish(deps, principal, "skill", skill, version, before, at);
      return whole(skillView({ ...skill, updatedAt: at }, await versionsOf(skill._id)));
    },

    async diffSkillVersions(
      principal: Principal,
      input: { skillId: string; versionId: string; againstVersionId: string },
    ): Promise<VersionDiffView> {
      const skill = await skillFor(principal, input.skillId, SCOPES.skillsRead);
      return diffVersions(
        { versions: c.skillVersions, parentField: "skillId", noun: "skill version", document: skillVersionDocument },
        skill._id,
        input,
      );
    },

    /** `replacePrompts`: the whole composition of a draft version, pinned to published prompt versions. */
    async replaceSkillPrompts(
      principal: Principal,
      input: { skillVersionId: string; prompts: readonly PromptSelector[] },
    ): Promise<SkillView> {
      const { skill, version } = await draftFor(principal, input.skillVersionId);
      const issues = new Issues();
      if (input.prompts.length > MAX_STEPS) issues.add("prompts", `must hold at most ${MAX_STEPS} prompts`);
      const aliases = checkAliases(
        issues,
        "prompts",
        input.prompts.map((p) => p.alias),
      );
      const variables = input.prompts.map((p, i): JsonObject => {
        const at = fieldPath(fieldPath("prompts", i), "variables");
        if (p.promptId === "") issues.add(fieldPath(fieldPath("prompts", i), "promptId"), "is required");
        if (p.variablesJson === undefined) return {};
        const parsed = parseJsonText(issues, at, p.variablesJson);
        if (parsed !== undefined && !isJsonObject(parsed))
          issues.add(at, "must be an object of variable names to bindings");
        return isJsonObject(parsed) ? parsed : {};
      });
      issues.throwIfAny();

      const missing: FieldIssue[] = [];
      const unpublished: FieldIssue[] = [];
      const resolved = await Promise.all(
        input.prompts.map(async (p, i) => {
          const base = fieldPath("prompts", i);
          const prompt = await c.prompts.findOne({ _id: p.promptId });
          if (!prompt || prompt.organizationId !== skill.organizationId) {
            missing.push({ field: fieldPath(base, "promptId"), issue: `prompt ${p.promptId} not found` });
            return undefined;
          }
          let pinned: PromptVersionDoc | undefined;
          if (p.promptVersionId !== undefined && p.promptVersionId !== "") {
            pinned = (await c.promptVersions.findOne({ _id: p.promptVersionId, promptId: prompt._id })) ?? undefined;
            if (!pinned) {
              missing.push({
                field: fieldPath(base, "promptVersionId"),
                issue: `prompt version ${p.promptVersionId} not found`,
              });
              return undefined;
            }
            if (pinned.status !== "published") {
              unpublished.push({
                field: fieldPath(base, "promptVersionId"),
                issue: `version ${pinned.version} is not published`,
              });
              return undefined;
            }
          } else {
            pinned = livePublishedVersion(await c.promptVersions.find({ promptId: prompt._id, status: "published" }));
            if (!pinned) {
              unpublished.push({
                field: fieldPath(base, "promptVersionId"),
                issue: `prompt "${prompt.name}" has no published version`,
              });
              return undefined;
            }
          }
          return { prompt, pinned };
        }),
      );
      const byField = (a: FieldIssue, b: FieldIssue) => a.field.localeCompare(b.field);
      if (missing.length > 0) throw new DomainError("not_found", "prompt not found", missing.sort(byField));
      if (unpublished.length > 0) {
        throw failedPrecondition("skills compose published prompt versions only", unpublished.sort(byField));
      }
      const steps = resolved.map((r, i) => {
        if (!r) throw new Error("unresolved step");
        return { ...r, alias: aliases[i] ?? `step${i + 1}`, variables: variables[i] ?? {}, index: i };
      });
      const contracts = steps.map((s) => contractOf(s.alias, s.variables, s.pinned));
      checkBindings(issues, "prompts", contracts);
      checkToolConflicts(
        issues,
        version.tools,
        steps.map((s) => ({
          field: fieldPath(fieldPath("prompts", s.index), "promptVersionId"),
          alias: s.alias,
          promptTools: s.pinned.tools,
        })),
        "prompt",
      );
      issues.throwIfAny();

      const { inputSchema, outputSchema } = deriveSkillSchemas(contracts);
      const promptComposition: CompositionStepDoc[] = steps.map((s) => ({
        order: s.index + 1,
        alias: s.alias,
        promptId: s.prompt._id,
        promptVersionId: s.pinned._id,
        promptName: s.prompt.name,
        version: s.pinned.version,
        variables: input.prompts[s.index]?.variablesJson ?? "{}",
      }));
      const at = deps.now();
      const updated = await c.skillVersions.findOneAndUpdate(
        { _id: version._id, status: "draft" },
        {
          $set: {
            promptComposition,
            inputSchema: JSON.stringify(inputSchema),
            outputSchema: JSON.stringify(outputSchema),
            updatedAt: at,
          },
        },
      );
      if (!updated) throw publishedVersionRefused(version);
      await touch(skill._id, at);
      return whole(skillView({ ...skill, updatedAt: at }, await versionsOf(skill._id), version._id));
    },

    /** The tools every step of a draft version may call besides its prompt version's own. */
    async replaceSkillTools(
      principal: Principal,
      input: { skillVersionId: string; tools: readonly ToolSelector[] },
    ): Promise<SkillView> {
      const { skill, version } = await draftFor(principal, input.skillVersionId);
      const tools = await resolveToolPins(deps, skill.organizationId, "tools", input.tools);
      const issues = new Issues();
      checkDistinctToolKeys(issues, "tools", tools);
      const stepTools = await Promise.all(
        version.promptComposition.map(async (step) => ({
          field: "tools",
          alias: step.alias,
          promptTools: (await c.promptVersions.findOne({ _id: step.promptVersionId }))?.tools ?? [],
        })),
      );
      checkToolConflicts(issues, tools, stepTools, "skill");
      issues.throwIfAny();
      const at = deps.now();
      const updated = await c.skillVersions.findOneAndUpdate(
        { _id: version._id, status: "draft" },
        { $set: { tools, updatedAt: at } },
      );
      if (!updated) throw publishedVersionRefused(version);
      await touch(skill._id, at);
      return whole(skillView({ ...skill, updatedAt: at }, await versionsOf(skill._id), version._id));
    },
  };
}
