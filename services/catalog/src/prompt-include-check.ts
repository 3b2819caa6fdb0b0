/**
 * What a prompt version's includes are read for outside a run (api.md "Partials"): the check they
 * pass before the version is created, published or given a label (no cycle: the prompt included by
 * what it includes, at any depth and label; no chain deeper than MAX_INCLUDE_DEPTH; read as they
 * stand now), and the partials a read of the version answers when asked (GetPrompt with_partials).
 * Refused: `400 invalid_argument` naming the path (`the includes make a cycle: a -> b -> a`), with
 * the field of the tag the path starts at (creation) or `versionId` (publish, label move) in the
 * details. An include that stands for nothing now is no refusal: a run through it fails with
 * `unresolved_partial` until it does.
 */
import { includeKey } from "@kiln/contracts/partials";
import { invalidArgument } from "@kiln/kit/errors";
import type { CatalogDeps } from "./catalog-deps.js";
import { describeProblem } from "./domain/prompt-includes.js";
import { templatesOf } from "./domain/prompt-version.js";
import { includesOf } from "./domain/templates.js";
import { resolvePartials, walkVersionIncludes } from "./resolving/include-lookup.js";
import { createLoading } from "./resolving/loading.js";
import type { PromptVersionDoc } from "./store/catalog-store.js";
import { VersionCache } from "./version-cache.js";

export type PromptIncludes = ReturnType<typeof createPromptIncludes>;

/** A version as the check reads it: its organization, templates and includes. */
type Checked = Pick<PromptVersionDoc, "organizationId" | "includes" | "systemPrompt" | "developerPrompt" | "messages">;

export function createPromptIncludes(deps: CatalogDeps) {
  const reads = createLoading(deps, new VersionCache({ maxEntries: 1_000 }));

  return {
    /**
     * Throws when `version` of `prompt` would make a cycle or a chain too deep; `at` says what is
     * being done: "create" names the template field, "move" names `versionId`.
     */
    async check(prompt: { _id: string; name: string }, version: Checked, at: "create" | "move"): Promise<void> {
      if (!version.includes || version.includes.length === 0) return;
      const { problem } = await walkVersionIncludes(deps, reads, { promptId: prompt._id, name: prompt.name }, version);
      if (!problem) return;
      const { message, issue } = describeProblem(problem);
      const field =
        at === "move"
          ? "versionId"
          : (includesOf(templatesOf(version)).find((i) => includeKey(i) === includeKey(problem.first))?.field ??
            "systemPrompt");
      throw invalidArgument(message, [{ field, issue }]);
    },

    /** The partials of `version` of `prompt` as a run would render them now. */
    partialsOf: (prompt: { _id: string; name: string }, version: Checked) =>
      resolvePartials(deps, reads, { promptId: prompt._id, name: prompt.name }, version),
  };
}
