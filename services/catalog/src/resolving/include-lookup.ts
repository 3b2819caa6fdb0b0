/**
 * What a prompt's `{{> name@label}}` stands for now (api.md "Partials"): the newest prompt of the
 * organization with that name (as the /v1 routes read a name), the version its label points at
 * (`production`: the live published one, `latest`: the newest), that version's text and its own
 * includes. Runs read it on every resolve the execution service's cache does not answer, and the
 * write checks read it when a version is created, published or labelled.
 */
import { LATEST, PRODUCTION } from "@kiln/contracts/labels";
import type { PromptInclude } from "@kiln/contracts/partials";
import type { CatalogDeps } from "../catalog-deps.js";
import { type IncludeLookup, type IncludeWalk, unresolvedOf, walkIncludes } from "../domain/prompt-includes.js";
import { includedTextOf } from "../domain/prompt-messages.js";
import type { PromptVersionDoc } from "../store/catalog-store.js";
import type { Loading } from "./loading.js";
import type { ResolvedPromptView } from "./views.js";

/** The reads of `Loading` an include lookup uses. */
type Reads = Pick<Loading, "versionsById" | "livePublished" | "labelTarget">;

export function createIncludeLookup(deps: CatalogDeps, reads: Reads, organizationId: string): IncludeLookup {
  const c = deps.collections;

  async function versionAt(promptId: string, label: string): Promise<PromptVersionDoc | undefined> {
    if (label === PRODUCTION) return reads.livePublished(c.promptVersions, { promptId });
    if (label === LATEST) {
      const [latest] = await c.promptVersions.find({ promptId }, { sort: { version: -1 }, limit: 1 });
      return latest;
    }
    const id = await reads.labelTarget("prompt", promptId, label);
    return id === null ? undefined : (await reads.versionsById(c.promptVersions, [id])).get(id);
  }

  return async ({ name, label }: PromptInclude) => {
    const [prompt] = await c.prompts.find(
      { organizationId, name },
      { sort: { _id: -1 }, limit: 1, projection: { _id: 1, organizationId: 1 } },
    );
    if (!prompt) return { missing: `no prompt is named "${name}"` };
    const version = await versionAt(prompt._id, label);
    if (!version || version.promptId !== prompt._id || version.organizationId !== organizationId) {
      return {
        promptId: prompt._id,
        missing:
          label === PRODUCTION
            ? `the prompt "${name}" has no published version (its production label)`
            : `the prompt "${name}" has no label "${label}"`,
      };
    }
    return {
      promptId: prompt._id,
      versionId: version._id,
      version: version.version,
      template: includedTextOf(version),
      includes: version.includes ?? [],
    };
  };
}

/** Walks the includes of `version` of the prompt `root` in its organization (prompt-includes.ts). */
export function walkVersionIncludes(
  deps: CatalogDeps,
  reads: Reads,
  root: { promptId: string; name: string },
  version: Pick<PromptVersionDoc, "organizationId" | "includes">,
): Promise<IncludeWalk> {
  return walkIncludes(root, version.includes ?? [], createIncludeLookup(deps, reads, version.organizationId));
}

/**
 * The partials a run of `version` renders with, as they stand now, and why it cannot run when an
 * include does not resolve (views.ts); nothing is read for a version that includes none.
 */
export async function resolvePartials(
  deps: CatalogDeps,
  reads: Reads,
  root: { promptId: string; name: string },
  version: Pick<PromptVersionDoc, "organizationId" | "includes">,
): Promise<Pick<ResolvedPromptView, "partials" | "unresolvedPartial">> {
  if (!version.includes || version.includes.length === 0) return {};
  const walk = await walkVersionIncludes(deps, reads, root, version);
  const partials = [...walk.resolved.values()].map(({ include, version: v }) => ({
    name: include.name,
    label: include.label,
    promptId: v.promptId,
    versionId: v.versionId,
    version: v.version,
    template: v.template,
  }));
  const unresolvedPartial = unresolvedOf(walk);
  return { partials, ...(unresolvedPartial && { unresolvedPartial }) };
}
