/**
 * Resolves a skill version (named, labelled, the draft for previews, or the live one) with its
 * composition's prompt versions and every tool they pin.
 */

import { type FieldIssue, notFound } from "@kiln/kit/errors";
import type { CatalogDeps } from "../catalog-deps.js";
import { fieldPath } from "../domain/issues.js";
import type { PromptDoc, PromptVersionDoc, SkillVersionDoc } from "../store/catalog-store.js";
import { resolvePartials } from "./include-lookup.js";
import { type Loading, notSelected, unique, type VersionRequest } from "./loading.js";
import type { ResolvedSkillView } from "./views.js";

export function createSkillLoader(deps: CatalogDeps, l: Loading) {
  const c = deps.collections;
  const { versionsById, livePublished, loadTools, toolsOf, unresolvable } = l;

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

  async function loadSkill(
    input: VersionRequest & { skillId: string; preferDraft: boolean },
  ): Promise<ResolvedSkillView> {
    const organizationId = input.organizationId;
    const label = input.label ?? "";
    const { viaLabel, labelled } = await l.labelled("skill", input.skillId, input);
    // Runs of the live version (not previews, which prefer the draft) may use the live cache.
    const wantsLive = input.versionId === "" && !input.preferDraft && !viaLabel;
    const stamp = deps.live.stamp();
    const cached = wantsLive ? deps.live.skill(input.skillId) : undefined;
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
    if (!selected) notSelected("skill", input);
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
    // Each step's prompt with what it includes as it stands now (most include nothing: no read).
    const withPartials = await Promise.all(
      steps.map(async (s) => ({
        ...s,
        prompt: {
          ...s.prompt,
          ...(await resolvePartials(
            deps,
            l,
            { promptId: s.step.promptId, name: s.prompt.promptName },
            s.prompt.version,
          )),
        },
      })),
    );
    return { version, steps: withPartials, tools };
  }

  return loadSkill;
}
