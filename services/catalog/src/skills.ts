import { PRODUCTION } from "@kiln/contracts/labels";
import { type FieldIssue, failedPrecondition, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import type { Principal } from "@kiln/kit/principal";
import { SCOPES } from "./access.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { fieldPath, Issues } from "./domain/issues.js";
import { createSkillComposition } from "./skill-composition-cases.js";
import { EMPTY_SCHEMAS, type SkillView, skillVersionDocument, skillView } from "./skill-view.js";
import type { SkillDoc, SkillVersionDoc } from "./store/catalog-store.js";
import { diffVersions, type VersionDiffView } from "./versioned/diff.js";
import { claimDraftSlot } from "./versioned/draft-slot.js";
import { commitPublish, insertWithFirstVersion, type PublishingFamily } from "./versioned/publish.js";
import { alreadyPublished, checkDescription, metadataChanges, versionedResource } from "./versioned/resource.js";
import { insertNextVersion, wholeVersion, wholeVersions } from "./versioned/version-store.js";

export { contractOf, type PromptSelector, type SkillView, skillVersionDocument, skillView } from "./skill-view.js";

export type Skills = ReturnType<typeof createSkills>;

/** The skill use cases (api.md "Skills"); the composition ones are in skill-composition-cases.ts. */
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

  const versionsOf = resource.versionsOf;
  /** The view with the version it describes read whole (versionsOf reads summaries). */
  const whole = (view: SkillView) => wholeVersion(c.skillVersions, view, "described");

  const touch = resource.touch;
  const publishing: PublishingFamily<SkillVersionDoc> = {
    kind: "skill",
    versions: c.skillVersions,
    versionsOf,
    touch,
    forgetLive: (id) => deps.live.forgetSkill(id),
    draftSlots: c.skillDraftSlots,
  };

  return {
    ...createSkillComposition(deps, resource),

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
      await insertWithFirstVersion(
        { parents: c.skills, versions: c.skillVersions, draftSlots: c.skillDraftSlots },
        skill,
        version,
        at,
      );
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
      const at = await commitPublish(deps, principal, publishing, skill, version);
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
  };
}
