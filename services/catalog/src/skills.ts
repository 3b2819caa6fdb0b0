import { type FieldIssue, failedPrecondition } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";
import type { CatalogDeps } from "./catalog-deps.js";
import { fieldPath } from "./domain/issues.js";
import { createSkillComposition } from "./skill-composition-cases.js";
import { EMPTY_SCHEMAS, type SkillView, skillVersionDocument, skillView } from "./skill-view.js";
import type { SkillDoc, SkillVersionDoc } from "./store/catalog-store.js";
import { publishedCases } from "./versioned/cases.js";
import type { VersionDiffView } from "./versioned/diff.js";
import { draftCases } from "./versioned/drafts.js";
import { familyStores } from "./versioned/families.js";

export { contractOf, type PromptSelector, type SkillView, skillVersionDocument, skillView } from "./skill-view.js";

export type Skills = ReturnType<typeof createSkills>;

/** What a skill version holds: a new draft copies it. */
const skillContent = (v: SkillVersionDoc) => ({
  promptComposition: v.promptComposition,
  tools: v.tools,
  inputSchema: v.inputSchema,
  outputSchema: v.outputSchema,
});

/** The skill use cases (api.md "Skills"); the composition ones are in skill-composition-cases.ts. */
export function createSkills(deps: CatalogDeps) {
  const c = deps.collections;
  const family = familyStores(deps).skill;
  const cases = publishedCases(deps, family, { view: skillView, described: "described" });
  const drafts = draftCases(deps, family, cases, {
    empty: {
      promptComposition: [],
      tools: [],
      inputSchema: JSON.stringify(EMPTY_SCHEMAS.inputSchema),
      outputSchema: JSON.stringify(EMPTY_SCHEMAS.outputSchema),
    },
    of: skillContent,
    version: (skill: SkillDoc, head, content) => ({ ...head, skillId: skill._id, ...content }),
    parent: (base) => base,
  });

  /** Why `version` cannot be published: an empty composition, or one that no longer resolves. */
  async function publishProblems(skill: SkillDoc, version: SkillVersionDoc): Promise<FieldIssue[]> {
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
    return problems.sort((a, b) => a.field.localeCompare(b.field));
  }

  return {
    ...createSkillComposition(deps, cases),

    /** A skill with an empty draft version 1. */
    createSkill: drafts.create,
    getSkill: cases.get,
    listSkills: cases.list,
    updateSkill: (principal: Principal, input: { id: string; name?: string; description?: string }) =>
      cases.update(principal, input),

    /** A new draft copied from `fromVersionId` (default: the latest); at most one draft per skill. */
    createSkillVersion: (principal: Principal, input: { skillId: string; fromVersionId: string }) =>
      drafts.newDraft(principal, input.skillId, input.fromVersionId),

    /**
     * Publishes a draft (default: the skill's draft) whose composition is not empty and still
     * resolves; the draft slot is released so a new draft can be made.
     */
    async publishSkillVersion(principal: Principal, input: { skillId: string; versionId: string }): Promise<SkillView> {
      const { parent, version } = await cases.toPublish(principal, input.skillId, input.versionId);
      const problems = await publishProblems(parent, version);
      if (problems.length > 0) {
        throw failedPrecondition(
          `skill version ${version.version} cannot be published: its composition does not resolve`,
          problems,
        );
      }
      return cases.publish(principal, parent, version);
    },

    async diffSkillVersions(
      principal: Principal,
      input: { skillId: string; versionId: string; againstVersionId: string },
    ): Promise<VersionDiffView> {
      return cases.resource.diff(principal, { parentId: input.skillId, ...input }, skillVersionDocument);
    },
  };
}
