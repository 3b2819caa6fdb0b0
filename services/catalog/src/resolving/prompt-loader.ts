/**
 * Resolves a prompt version: the one named, the one a label points at, or the live one (the
 * `production` label), with the response-cache default of the label it went through.
 */

import { PRODUCTION } from "@kiln/contracts/labels";
import { type FieldIssue, notFound } from "@kiln/kit/errors";
import type { CatalogDeps } from "../catalog-deps.js";
import { labelTtlOf } from "../label-cache-ttl.js";
import { resolvePartials } from "./include-lookup.js";
import { type Loading, NO_TOOLS, notSelected, type VersionRequest } from "./loading.js";
import type { ResolvedPromptView } from "./views.js";

export function createPromptLoader(deps: CatalogDeps, l: Loading) {
  const c = deps.collections;
  const { versionsById, livePublished, loadTools, toolsOf, unresolvable } = l;

  async function loadPrompt(input: VersionRequest & { promptId: string }): Promise<ResolvedPromptView> {
    const organizationId = input.organizationId;
    const { viaLabel, labelled } = await l.labelled("prompt", input.promptId, input);
    const wantsLive = input.versionId === "" && !viaLabel;
    const stamp = deps.live.stamp();
    const cached = wantsLive ? deps.live.prompt(input.promptId) : undefined;
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
    if (!version) notSelected("prompt", input);
    const problems: FieldIssue[] = [];
    const resolved = toolsOf(version.tools, tools, organizationId, "tools", problems);
    if (problems.length > 0) throw unresolvable(`prompt version ${version.version}`, problems);
    if (wantsLive && !cached) deps.live.rememberPrompt(prompt, version._id, stamp);
    // A run by version id goes through no label; one naming neither runs production.
    const through = input.versionId === "" ? input.label || PRODUCTION : undefined;
    const labelCacheTtlSeconds = through === undefined ? undefined : labelTtlOf(prompt, through);
    const partials = await resolvePartials(deps, l, { promptId: prompt._id, name: prompt.name }, version);
    return {
      version,
      promptName: prompt.name,
      tools: resolved,
      ...partials,
      ...(labelCacheTtlSeconds !== undefined && { labelCacheTtlSeconds }),
    };
  }

  return loadPrompt;
}
