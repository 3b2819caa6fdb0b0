/**
 * Export and import of an organization's catalog (docs/bundles.md, format `kiln.bundle/v1`):
 * parse.ts checks a bundle's shape, export.ts writes one, plan/ plans an import kind by kind,
 * journal.ts applies and undoes it, this module gives them their use cases, and run-import.ts runs
 * a whole import (the evaluation cases included) behind the ImportOrganization RPC.
 *
 * Export reads every prompt, tool, skill and agent with their versions and labels, oldest first, so
 * an import that creates them in bundle order gives an organization whose export is the same bundle
 * with other ids.
 *
 * Import plans everything before it writes anything: every id of the bundle is mapped to an
 * existing thing (the same id in this organization, or what an earlier import made of it: the
 * `import_map`) or to a new id, every reference is rewritten through that map, and every version's
 * content is checked as creating it would check it. A dry run stops there. A real import writes a
 * journal first (what to delete, what to put back), then the map entries (a unique key per bundle
 * id: two concurrent imports of one bundle cannot both create), then the documents; a failure
 * undoes the journal. FerretDB has no transactions (docs/architecture.md "Store backends"), so "whole or nothing" is this
 * undo, and an import whose caller died half-way is undone by `sweep` after `staleAfterMs`.
 */
import { DomainError, failedPrecondition, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import type { Logger } from "@kiln/kit/logger";
import type { Principal } from "@kiln/kit/principal";
import { SCOPES } from "../access.js";
import type { CatalogDeps } from "../catalog-deps.js";
import { authorize, createExport } from "./export.js";
import { createJournal } from "./journal.js";
import { parseBundle } from "./parse.js";
import { plan } from "./plan/index.js";
import { type CatalogBundle, DEFAULT_STALE_IMPORT_MS, type ImportPlanResult, type SkillMapping } from "./shared.js";

export { checkBundle, parseBundle } from "./parse.js";
export {
  type CatalogBundle,
  DEFAULT_STALE_IMPORT_MS,
  type ImportPlanResult,
  type SkillMapping,
} from "./shared.js";

export type Bundles = ReturnType<typeof createBundles>;

export function createBundles(deps: CatalogDeps, options: { logger?: Logger; staleAfterMs?: number } = {}) {
  const c = deps.collections;
  const staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_IMPORT_MS;
  const exportBundle = createExport(deps);
  const { apply, undo } = createJournal(deps, options.logger);

  const authorizeImport = (principal: Principal, organizationId: string) =>
    authorize(deps, principal, organizationId, [
      SCOPES.toolsWrite,
      SCOPES.promptsWrite,
      SCOPES.skillsWrite,
      SCOPES.agentsWrite,
    ]);

  return {
    exportBundle,

    /**
     * Plans an import and, unless `dryRun`, applies the catalog's part of it. The caller
     * (run-import.ts) imports the evaluation cases next and then calls `finishImport` (commit, or
     * undo when they failed). The bundle is its JSON text, or already checked (parse.ts).
     */
    async importBundle(
      principal: Principal,
      input: { organizationId: string; dryRun: boolean } & ({ bundleJson: string } | { bundle: CatalogBundle }),
    ): Promise<ImportPlanResult> {
      await authorizeImport(principal, input.organizationId);
      const bundle = "bundle" in input ? input.bundle : parseBundle(input.bundleJson);
      const p = await plan(deps, principal, input.organizationId, bundle);
      // Publishing and moving labels in an import takes what moving them takes (docs/labels.md).
      const kinds = [
        ["prompt", SCOPES.promptsWrite],
        ["skill", SCOPES.skillsWrite],
        ["agent", SCOPES.agentsWrite],
      ] as const;
      for (const label of p.movedLabels) {
        for (const [kind] of kinds) {
          await deps.access.moveLabel(principal, input.organizationId, SCOPES.labelsWrite, kind, label);
        }
      }
      const importId = newId("imp");
      const skills = bundle.skills.map((s): SkillMapping => {
        const id = p.ids.get(s.id) ?? "";
        return { sourceId: s.id, id, created: p.mapped.has(s.id) };
      });
      if (!input.dryRun) {
        if (p.conflicts.length > 0) {
          throw failedPrecondition("the bundle conflicts with this organization; nothing was imported", p.conflicts);
        }
        await apply(input.organizationId, importId, p);
      }
      return { importId: input.dryRun ? "" : importId, items: p.items, skills: skills.filter((s) => s.id !== "") };
    },

    /** Commits an applied import (its events go out), or undoes it. */
    async finishImport(principal: Principal, input: { organizationId: string; importId: string; commit: boolean }) {
      await authorizeImport(principal, input.organizationId);
      const journal = await c.imports.findOne({ _id: input.importId, organizationId: input.organizationId });
      if (!journal) throw notFound("import");
      if (!input.commit) {
        if (journal.status === "committed") throw failedPrecondition("the import is committed");
        if (journal.status !== "undone") await undo(journal);
        return;
      }
      if (journal.status === "committed") return;
      if (journal.status !== "applied") throw failedPrecondition(`the import is ${journal.status}`);
      const done = await c.imports.findOneAndUpdate(
        { _id: journal._id, status: "applied" },
        { $set: { status: "committed", updatedAt: deps.now(), undo: [] } },
      );
      if (!done) throw new DomainError("unavailable", "the import changed concurrently; retry");
      const moves =
        journal.labelMoveIds.length > 0 ? await c.labelMoves.find({ _id: { $in: journal.labelMoveIds } }) : [];
      for (const move of moves.sort((a, b) => a._id.localeCompare(b._id))) await deps.events.labelMoved(move);
    },

    /**
     * Where an import stands ("unknown" when there is none): the evaluation service asks it of
     * cases stored for an import whose catalog call never said how it ended.
     */
    async getImport(principal: Principal, input: { organizationId: string; importId: string }): Promise<string> {
      await deps.access.inOrganization(principal, input.organizationId, SCOPES.skillsRead);
      const journal = await c.imports.findOne({ _id: input.importId, organizationId: input.organizationId });
      return journal?.status ?? "unknown";
    },

    /** Undoes imports whose caller stopped before finishing them. */
    sweep,
  };

  async function sweep(): Promise<number> {
    const before = new Date(deps.now().getTime() - staleAfterMs);
    const stale = await c.imports.find({ status: { $in: ["applying", "applied"] }, updatedAt: { $lt: before } });
    for (const journal of stale) {
      options.logger?.warn({ importId: journal._id }, "undoing an import its caller left unfinished");
      await undo(journal);
    }
    return stale.length;
  }
}
