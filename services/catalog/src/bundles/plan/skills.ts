import type { Bundle } from "@kiln/contracts/bundle";
import { fieldPath } from "../../domain/issues.js";
import type { JsonObject } from "../../domain/json-schema.js";
import { checkAliases, checkBindings, deriveSkillSchemas, type StepContract } from "../../domain/skill-composition.js";
import { contractOf } from "../../skills.js";
import type { CompositionStepDoc, SkillDoc, SkillVersionDoc } from "../../store/catalog-store.js";
import { toDate } from "../shared.js";
import type { PlanContext } from "./context.js";
import { versionedPlanner } from "./versioned.js";

/** Plans the bundle's skills: each step's prompt version rewritten to one here and its bindings checked. */
export async function planSkills(ctx: PlanContext, bundle: Bundle): Promise<void> {
  const { c, organizationId, issues, promptVersions, promptNames, sub, refer, mapNew, insert, pinsOf } = ctx;
  await versionedPlanner(ctx).planEach<SkillDoc, SkillVersionDoc, Bundle["skills"][number]>("skill", bundle.skills, {
    async planVersion(_skill, v, vField, skillId) {
      const stepsField = fieldPath(vField, "promptComposition");
      const aliases = checkAliasesInto(
        vField,
        v.promptComposition.map((s) => s.alias),
      );
      const steps: CompositionStepDoc[] = [];
      const contracts: StepContract[] = [];
      for (const [k, step] of v.promptComposition.entries()) {
        const at_ = fieldPath(stepsField, k);
        const promptId = await refer("prompts", step.promptId, fieldPath(at_, "promptId"));
        const promptVersionId = await refer("promptVersions", step.promptVersionId, fieldPath(at_, "promptVersionId"));
        let pinned = promptVersions.get(promptVersionId);
        if (!pinned) {
          pinned = (await c.promptVersions.findOne({ _id: promptVersionId, organizationId })) ?? undefined;
          if (pinned) promptVersions.set(pinned._id, pinned);
        }
        if (!pinned) continue;
        if (pinned.promptId !== promptId)
          issues.add(fieldPath(at_, "promptVersionId"), "is not a version of the step's prompt");
        if (pinned.status !== "published")
          issues.add(fieldPath(at_, "promptVersionId"), `version ${pinned.version} is not published`);
        const alias = aliases[k] ?? `step${k + 1}`;
        let name = promptNames.get(promptId);
        if (name === undefined) name = (await c.prompts.findOne({ _id: promptId, organizationId }))?.name ?? "";
        steps.push({
          order: k + 1,
          alias,
          promptId,
          promptVersionId,
          promptName: name,
          version: pinned.version,
          variables: JSON.stringify(step.variables),
        });
        contracts.push(contractOf(alias, step.variables as JsonObject, pinned));
      }
      sub(vField, (s) => checkBindings(s, "promptComposition", contracts));
      const schemas = contracts.length === v.promptComposition.length ? deriveSkillSchemas(contracts) : null;
      const id = mapNew(v.id, "sv");
      insert("skillVersions", {
        _id: id,
        skillId,
        organizationId,
        version: v.version,
        status: v.status,
        promptComposition: steps,
        tools: await pinsOf(v.tools, fieldPath(vField, "tools")),
        inputSchema: JSON.stringify(schemas?.inputSchema ?? {}),
        outputSchema: JSON.stringify(schemas?.outputSchema ?? {}),
        createdAt: new Date(v.createdAt),
        updatedAt: toDate(v.publishedAt) ?? new Date(v.createdAt),
        publishedAt: toDate(v.publishedAt),
      } satisfies SkillVersionDoc);
      return id;
    },
  });

  function checkAliasesInto(vField: string, given: readonly string[]): string[] {
    let aliases: string[] = [];
    sub(vField, (s) => {
      aliases = checkAliases(s, "promptComposition", given);
    });
    return aliases;
  }
}
