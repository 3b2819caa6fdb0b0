/**
 * The whole import of an organization (docs/bundles.md "Import"), behind the ImportOrganization
 * RPC. A promptfoo config is converted to a bundle first (its providers land on the models the
 * execution service has); then the catalog plans its part and, unless it is a dry run, applies it
 * (index.ts, journal.ts); the evaluation service imports the evaluation cases; the catalog commits.
 * When the cases fail, the catalog's part is undone; when the commit fails, the cases and the
 * catalog's part are. Nothing is left half-imported: an undo that fails is logged and left to the
 * sweeps (the catalog's journal sweep, and the evaluation service's, which asks GetImport).
 */
import { type CallOptions, type Client, createContextValues } from "@connectrpc/connect";
import { IMPORT_ITEM_KINDS, IMPORT_OUTCOMES, type ImportItem } from "@kiln/contracts/bundle";
import type { Logger } from "@kiln/kit/logger";
import { kPrincipal, kRequestId, type Principal } from "@kiln/kit/principal";
import { remote } from "@kiln/kit/rpc/errors";
import type { ImportItem as ImportItemMessage } from "@kiln/proto/catalog";
import type { EvaluationService } from "@kiln/proto/evaluation";
import type { ExecutionService } from "@kiln/proto/execution";
import type { Bundles } from "./index.js";
import { checkBundle } from "./parse.js";
import { type ModelCatalog, parsePromptfooConfig, promptfooToBundle } from "./promptfoo/index.js";
import type { CatalogBundle } from "./shared.js";

/** The other services an import calls, with the caller's principal. */
export interface ImportPeers {
  /** Imports the evaluation cases (or reports them, for a dry run) and undoes them. */
  evaluation: Pick<Client<typeof EvaluationService>, "importEvaluationCases" | "undoEvaluationCaseImport">;
  /** The models here: where a promptfoo config's providers land. */
  execution: Pick<Client<typeof ExecutionService>, "listModels">;
}

/** What an import takes: a parsed bundle (JSON value), or a promptfoo config (YAML or JSON text, or its value). */
export type ImportDocument =
  | { format: "kiln.bundle/v1"; bundle: unknown }
  /** `files`: the texts of the files the config refers to, by their path relative to it. */
  | { format: "promptfoo"; config: unknown; files?: Readonly<Record<string, string>> };

export interface ImportReport {
  dryRun: boolean;
  format: ImportDocument["format"];
  summary: { created: number; updated: number; skipped: number; conflicts: number };
  items: ImportItem[];
  warnings: string[];
}

export interface ImportCall {
  principal: Principal;
  requestId?: string;
}

/** An item as the evaluation service answers it (kiln.catalog.v1.ImportItem). */
export function importItemOf(m: ImportItemMessage): ImportItem {
  const kind = IMPORT_ITEM_KINDS.find((k) => k === m.kind);
  const outcome = IMPORT_OUTCOMES.find((o) => o === m.outcome);
  if (!kind || !outcome) throw new Error(`an import item of kind "${m.kind}" and outcome "${m.outcome}"`);
  return {
    kind,
    sourceId: m.sourceId,
    id: m.id ?? null,
    name: m.name,
    outcome,
    ...(m.detail !== undefined && { detail: m.detail }),
  };
}

/**
 * The import use case. `peers` is asked for on each import, not when the catalog starts: in the
 * embedded mode the evaluation and execution services are built after the catalog.
 */
export function createImportRun(bundles: Bundles, peers: () => ImportPeers, logger?: Logger) {
  return async function importOrganization(
    call: ImportCall,
    input: { organizationId: string; dryRun: boolean; document: ImportDocument },
  ): Promise<ImportReport> {
    const { organizationId, dryRun, document } = input;
    const { evaluation, execution } = peers();
    const options: CallOptions = {
      contextValues: createContextValues().set(kPrincipal, call.principal).set(kRequestId, call.requestId),
    };
    let bundle: CatalogBundle;
    let warnings: string[] = [];
    if (document.format === "promptfoo") {
      const config = parsePromptfooConfig(document.config);
      const models = await modelCatalog(execution, options);
      const converted = promptfooToBundle(config, models, new Date(), document.files ?? {});
      // Checked as a bundle sent as JSON is (the converter leaves unset fields undefined).
      bundle = checkBundle(JSON.parse(JSON.stringify(converted.bundle)));
      warnings = converted.warnings;
    } else {
      bundle = checkBundle(document.bundle);
    }
    const planned = await bundles.importBundle(call.principal, { organizationId, bundle, dryRun });
    const items = [...planned.items];
    const skills = new Map(planned.skills.map((s) => [s.sourceId, s]));
    const cases = bundle.skills.flatMap((s, i) => {
      const skill = skills.get(s.id);
      if (!skill) return [];
      return s.evaluationCases.map((k, j) => ({
        skillId: skill.id,
        skillCreated: skill.created,
        field: `skills[${i}].evaluationCases[${j}]`,
        case: k,
      }));
    });
    const { importId } = planned;
    const finish = (commit: boolean) => bundles.finishImport(call.principal, { organizationId, importId, commit });
    if (cases.length > 0) {
      try {
        const r = await remote(
          evaluation.importEvaluationCases(
            { organizationId, importId, dryRun, casesJson: JSON.stringify(cases) },
            options,
          ),
        );
        items.push(...r.items.map(importItemOf));
      } catch (e) {
        if (!dryRun) await undoQuietly(importId, () => finish(false));
        throw e;
      }
    }
    if (!dryRun) {
      try {
        await finish(true);
      } catch (e) {
        await undoQuietly(importId, () => evaluation.undoEvaluationCaseImport({ organizationId, importId }, options));
        await undoQuietly(importId, () => finish(false));
        throw e;
      }
    }
    // A dry run's new ids are drawn again by the real import: it names none (docs/bundles.md "Import").
    if (dryRun) {
      for (const [n, item] of items.entries()) {
        if (item.outcome === "created")
          items[n] = { ...item, id: null, detail: item.detail ?? "its id is assigned at import" };
      }
    }
    const count = (outcome: ImportItem["outcome"]) => items.filter((i) => i.outcome === outcome).length;
    return {
      dryRun,
      format: document.format,
      summary: {
        created: count("created"),
        updated: count("updated"),
        skipped: count("skipped"),
        conflicts: count("conflict"),
      },
      items,
      warnings,
    };
  };

  async function undoQuietly(importId: string, undo: () => Promise<unknown>) {
    try {
      await undo();
    } catch (err) {
      logger?.error({ err, importId }, "undoing a failed import failed; the sweeps undo it later");
    }
  }
}

export type ImportRun = ReturnType<typeof createImportRun>;

/** Where a promptfoo config's providers land: the models here, else local/echo (always there). */
async function modelCatalog(execution: ImportPeers["execution"], options: CallOptions): Promise<ModelCatalog> {
  const r = await remote(execution.listModels({}, options));
  const ids = r.models.filter((m) => m.available).map((m) => m.id);
  return { ids, fallback: ids.includes("local/echo") ? "local/echo" : (ids[0] ?? "local/echo") };
}
