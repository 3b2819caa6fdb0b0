/**
 * What the execution service runs: a prompt version or a skill version with everything it pins
 * (prompt versions, tool versions) read in a few batched queries. This is the hot path of every
 * run, so each call reads each collection at most once, in parallel where it can, and immutable
 * version documents come from the `VersionCache` (see version-cache.ts for what is cached).
 */
import { invalidArgument } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";
import { SCOPES } from "./access.js";
import type { CatalogDeps } from "./catalog-deps.js";
import { Issues } from "./domain/issues.js";
import { createAgentLoader } from "./resolving/agent-loader.js";
import { createDraftLoader, type PromptDraftInput } from "./resolving/draft-loader.js";
import { createLoading, type VersionRequest } from "./resolving/loading.js";
import { createPromptLoader } from "./resolving/prompt-loader.js";
import { createSkillLoader } from "./resolving/skill-loader.js";
import type { LabelKind } from "./store/catalog-store.js";
import { VersionCache } from "./version-cache.js";

export type {
  ResolvedAgentStepView,
  ResolvedAgentView,
  ResolvedPromptView,
  ResolvedSkillView,
  ResolvedToolView,
} from "./resolving/views.js";

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

/** A run names a version, a label or a draft (an unsaved version), not two of them. */
function oneOf(input: { versionId: string; label?: string; draft?: unknown }): void {
  if (input.versionId !== "" && (input.label ?? "") !== "") {
    throw invalidArgument("name a version or a label, not both", [
      { field: "label", issue: "cannot be given with versionId" },
    ]);
  }
  if (input.draft !== undefined && (input.versionId !== "" || (input.label ?? "") !== "")) {
    const field = input.versionId !== "" ? "versionId" : "label";
    throw invalidArgument("a draft is run as it is: name no version or label with it", [
      { field, issue: "cannot be given with draft" },
    ]);
  }
}

export type Resolver = ReturnType<typeof createResolver>;

/**
 * The resolve use cases of the execution service. The caller is the end user (or API key) the
 * run is for, authorized with `runs:write` in the run request's organization; the resource must
 * belong to that organization, otherwise it is not found, exactly as if it did not exist.
 */
export function createResolver(deps: CatalogDeps, cache: VersionCache = new VersionCache()) {
  const loading = createLoading(deps, cache);
  const loadPrompt = createPromptLoader(deps, loading);
  const loadDraft = createDraftLoader(deps, loading);
  const loadSkill = createSkillLoader(deps, loading);
  const loadAgent = createAgentLoader(deps, loading, loadPrompt, loadSkill);

  /**
   * One resolve use case: the request checked, then the caller authorized while the version is
   * loaded (the authorization decides first, see `settle`).
   */
  const resolving =
    <K extends LabelKind, I extends VersionRequest & Record<`${K}Id`, string>, T>(
      kind: K,
      load: (input: I) => Promise<T>,
    ) =>
    async (principal: Principal, input: I): Promise<T> => {
      const issues = new Issues();
      if (input.organizationId === "") issues.add("organizationId", "is required");
      if (input[`${kind}Id`] === "") issues.add(`${kind}Id`, "is required");
      issues.throwIfAny();
      oneOf(input);
      const [, loaded] = await Promise.all([
        deps.access.onResource(principal, input.organizationId, SCOPES.runsWrite, kind),
        settle(load(input)),
      ]);
      return loaded();
    };

  return {
    /**
     * Raises the change counter this replica's answers are current at to what a caller has seen,
     * and answers it (LiveVersionCache.atLeast): called before a resolve that names one.
     */
    atLeast: (minGeneration: number) => deps.live.atLeast(minGeneration),

    /**
     * `versionId` names any version of the prompt, draft or published (api.md: the run "uses the
     * published version unless versionId is given"); without it the live published version, and
     * none is failed_precondition (409). With `draft`: that unsaved version of the prompt (draft-loader.ts).
     */
    resolvePromptVersion: resolving(
      "prompt",
      (input: VersionRequest & { promptId: string; draft?: PromptDraftInput }) =>
        input.draft ? loadDraft({ ...input, draft: input.draft }) : loadPrompt(input),
    ),

    /**
     * `versionId` names any version of the skill; without it, with `preferDraft` (previews) the
     * draft if there is one, else the live published version; none is failed_precondition (409).
     * A composition whose prompt or tool versions no longer resolve is failed_precondition with
     * the offending fields in the details.
     */
    resolveSkillVersion: resolving("skill", loadSkill),

    /**
     * An agent version (default: the live published one; `versionId` names any version) with its
     * workflow's references pinned and resolved, step by step, as resolvePromptVersion,
     * resolveSkillVersion and the tool pins resolve them. A published version's workflow was
     * validated and pinned when it was published; a draft is validated now (an invalid one is
     * failed_precondition with the findings in `details`) and its unpinned references are pinned
     * to what is published now, in the answered `workflow` too.
     */
    resolveAgentVersion: resolving("agent", loadAgent),
  };
}
