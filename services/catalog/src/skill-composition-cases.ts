/**
 * The skill use cases that change a draft's composition: its prompt steps (pinned to published
 * prompt versions, with their bindings checked and the skill's schemas derived) and its tools.
 */
import { DomainError, type FieldIssue, failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";
import { SCOPES } from "./access.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { fieldPath, Issues } from "./domain/issues.js";
import { isJsonObject, type JsonObject, parseJsonText } from "./domain/json-schema.js";
import { checkAliases, checkBindings, deriveSkillSchemas, MAX_STEPS } from "./domain/skill-composition.js";
import { checkDistinctToolKeys, conflictingPin, type ToolPin } from "./domain/tool-pins.js";
import { livePublishedVersion } from "./domain/versions.js";
import { contractOf, type PromptSelector, publishedVersionRefused, type SkillView } from "./skill-view.js";
import type { CompositionStepDoc, PromptVersionDoc, SkillDoc, SkillVersionDoc } from "./store/catalog-store.js";
import { resolveToolPins, type ToolSelector } from "./tools.js";
import type { PublishedCases } from "./versioned/cases.js";

type SkillCases = PublishedCases<SkillDoc, SkillVersionDoc, "described", SkillView>;

export function createSkillComposition(deps: CatalogDeps, cases: SkillCases) {
  const c = deps.collections;

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

  const touch = cases.resource.touch;

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
      return cases.viewOf({ ...skill, updatedAt: at }, version._id);
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
      return cases.viewOf({ ...skill, updatedAt: at }, version._id);
    },
  };
}
