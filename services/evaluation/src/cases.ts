import type { CaseToImport, ImportItem } from "@kiln/contracts/bundle";
import { type FieldIssue, invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { SCOPES } from "./access.js";
import { checkNewCases, type NewCaseInput } from "./domain/new-cases.js";
import type { EvaluationDeps } from "./evaluation-deps.js";
import type { CaseDoc, CaseImportDoc } from "./store/evaluation-store.js";

/** Evaluation cases: created in batches per skill, listed newest first. */
export function createCases(deps: EvaluationDeps) {
  const c = deps.collections;
  // Named, not `this`: the RPC table passes these methods unbound.
  const cases = {
    /** Every case is checked before any is stored: a batch is stored whole or not at all. */
    async createCases(
      principal: Principal,
      input: { organizationId: string; skillId: string; cases: NewCaseInput[] },
    ): Promise<CaseDoc[]> {
      const skill = await deps.access.skill(principal, input.organizationId, input.skillId, SCOPES.evaluationsWrite);
      const checked = checkNewCases(input.cases);
      if (checked.issues.length > 0) throw invalidArgument("the evaluation cases are invalid", checked.issues);
      const createdAt = deps.now();
      const docs = checked.cases.map(
        (k): CaseDoc => ({
          _id: newId("evc"),
          skillId: skill.id,
          organizationId: skill.organizationId,
          name: k.name,
          inputJson: k.inputJson,
          expectedOutputJson: k.expectedOutputJson,
          assertionsJson: k.assertionsJson,
          createdAt,
        }),
      );
      // Fresh ids never clash, so the ordered insert stores the whole batch.
      await c.cases.insertMany(docs);
      return docs;
    },

    /**
     * Replaces one case's content (checked as a new case is). Runs started after it use the new
     * content; a run in progress may have read the case already.
     */
    async updateCase(
      principal: Principal,
      input: { organizationId: string; skillId: string; caseId: string; evaluationCase: NewCaseInput },
    ): Promise<CaseDoc> {
      const skill = await deps.access.skill(principal, input.organizationId, input.skillId, SCOPES.evaluationsWrite);
      const existing = await c.cases.findOne({ _id: input.caseId });
      if (!existing || existing.skillId !== skill.id || existing.organizationId !== skill.organizationId) {
        throw notFound("evaluation case");
      }
      const checked = checkNewCases([input.evaluationCase]);
      if (checked.issues.length > 0) {
        const issues = checked.issues.map((i) => ({ ...i, field: i.field.replace(/^cases\[0\]\.?/, "") }));
        throw invalidArgument("the evaluation case is invalid", issues);
      }
      const [k] = checked.cases;
      if (!k) throw new Error("a checked case vanished");
      const set = {
        name: k.name,
        inputJson: k.inputJson,
        expectedOutputJson: k.expectedOutputJson,
        assertionsJson: k.assertionsJson,
      };
      return (await c.cases.findOneAndUpdate({ _id: existing._id }, { $set: set })) ?? { ...existing, ...set };
    },

    /** Deletes one case; reports of runs that used it keep its results under its id. */
    async deleteCase(
      principal: Principal,
      input: { organizationId: string; skillId: string; caseId: string },
    ): Promise<CaseDoc> {
      const skill = await deps.access.skill(principal, input.organizationId, input.skillId, SCOPES.evaluationsWrite);
      const filter = { _id: input.caseId, skillId: skill.id, organizationId: skill.organizationId };
      const existing = await c.cases.findOne(filter);
      if (!existing || (await c.cases.deleteOne(filter)).deletedCount === 0) throw notFound("evaluation case");
      await c.caseImports.deleteMany({ organizationId: skill.organizationId, caseId: existing._id });
      return existing;
    },

    /** Every case of the organization, oldest first (docs/bundles.md). */
    async exportCases(principal: Principal, input: { organizationId: string }) {
      await deps.access.onResource(principal, input.organizationId, SCOPES.evaluationsRead, "organization");
      return c.cases.find({ organizationId: input.organizationId }, { sort: { _id: 1 } });
    },

    /**
     * Imports the cases of a bundle: one already here (the same id, or made from it by an earlier
     * import) is skipped, every other is checked as a new case is and created, tagged with the
     * import so `undoImport` can take them back. All are checked before any is stored.
     */
    async importCases(
      principal: Principal,
      input: { organizationId: string; importId: string; dryRun: boolean; cases: CaseToImport[] },
    ): Promise<ImportItem[]> {
      const { organizationId } = input;
      await deps.access.onResource(principal, organizationId, SCOPES.evaluationsWrite, "organization");
      if (!input.dryRun && input.importId === "")
        throw invalidArgument("importId is required", [{ field: "importId", issue: "is required" }]);
      const skills = new Set(input.cases.filter((k) => !(k.skillCreated && input.dryRun)).map((k) => k.skillId));
      for (const skillId of skills)
        await deps.access.skill(principal, organizationId, skillId, SCOPES.evaluationsWrite);
      // Which cases are here already, read at once: the same id, or what an earlier import made.
      const sourceIds = input.cases.map((k) => k.case.id);
      const [same, mapped] = await Promise.all([
        c.cases.find({ _id: { $in: sourceIds }, organizationId }),
        c.caseImports.find({ _id: { $in: sourceIds.map((id) => `${organizationId}/${id}`) } }),
      ]);
      const made =
        mapped.length > 0 ? await c.cases.find({ _id: { $in: mapped.map((e) => e.caseId) }, organizationId }) : [];
      const madeIds = new Set(made.map((d) => d._id));
      const hereOf = new Map<string, string>(same.map((d) => [d._id, d._id]));
      for (const e of mapped) {
        const sourceId = e._id.slice(organizationId.length + 1);
        if (madeIds.has(e.caseId) && !hereOf.has(sourceId)) hereOf.set(sourceId, e.caseId);
      }
      const issues: FieldIssue[] = [];
      const items: ImportItem[] = [];
      const docs: CaseDoc[] = [];
      const entries: CaseImportDoc[] = [];
      for (const k of input.cases) {
        const bundled = k.case;
        const checked = checkNewCases([
          {
            name: bundled.name,
            inputJson: JSON.stringify(bundled.input),
            ...(bundled.expectedOutput !== undefined && { expectedOutputJson: JSON.stringify(bundled.expectedOutput) }),
            assertions: bundled.assertions,
          },
        ]);
        for (const i of checked.issues) issues.push({ field: i.field.replace(/^cases\[0\]/, k.field), issue: i.issue });
        const item = { kind: "evaluation_case" as const, sourceId: bundled.id, name: bundled.name };
        const here = hereOf.get(bundled.id);
        if (here) {
          items.push({ ...item, id: here, outcome: "skipped" });
          continue;
        }
        const [ok] = checked.cases;
        if (!ok) continue;
        const id = newId("evc");
        items.push({ ...item, id, outcome: "created" });
        docs.push({
          _id: id,
          skillId: k.skillId,
          organizationId,
          ...ok,
          createdAt: new Date(bundled.createdAt),
          importId: input.importId,
          importPending: true,
          importedAt: deps.now(),
        });
        entries.push({ _id: `${organizationId}/${bundled.id}`, organizationId, caseId: id, importId: input.importId });
      }
      if (issues.length > 0) throw invalidArgument("the bundle's evaluation cases are invalid", issues);
      if (input.dryRun || docs.length === 0) return items;
      try {
        // The map first: a concurrent import of the same cases fails here, before it stores any.
        await c.caseImports.insertMany(entries);
        await c.cases.insertMany(docs);
      } catch (e) {
        await cases.undoImport(principal, { organizationId, importId: input.importId });
        throw e;
      }
      return items;
    },

    /** Deletes what an import of cases stored. */
    async undoImport(principal: Principal, input: { organizationId: string; importId: string }): Promise<number> {
      await deps.access.onResource(principal, input.organizationId, SCOPES.evaluationsWrite, "organization");
      if (input.importId === "")
        throw invalidArgument("importId is required", [{ field: "importId", issue: "is required" }]);
      const filter = { organizationId: input.organizationId, importId: input.importId };
      const deleted = await c.cases.deleteMany(filter);
      await c.caseImports.deleteMany(filter);
      return deleted.deletedCount;
    },

    /**
     * Settles cases stored by imports that are `staleAfterMs` old and still pending: the catalog
     * replica that ran the import died before it could say how it ended. The catalog's journal decides:
     * committed keeps them, undone (or no such import) deletes them, unfinished waits for the
     * catalog's own sweep. Answers how many imports were settled.
     */
    async sweepImports(staleAfterMs = 15 * 60_000): Promise<number> {
      const before = new Date(deps.now().getTime() - staleAfterMs);
      const pending = await c.cases.find({ importPending: true, importedAt: { $lt: before } }, { limit: 1_000 });
      const imports = new Map<string, { organizationId: string; importId: string }>();
      for (const k of pending) {
        if (k.importId)
          imports.set(`${k.organizationId}/${k.importId}`, { organizationId: k.organizationId, importId: k.importId });
      }
      let settled = 0;
      for (const { organizationId, importId } of imports.values()) {
        const status = await deps.access.importStatus(organizationId, importId);
        const filter = { organizationId, importId };
        if (status === "committed") {
          await c.cases.updateMany({ ...filter, importPending: true }, { $set: { importPending: false } });
        } else if (status === "undone" || status === "unknown") {
          deps.logger.warn({ importId }, "deleting the evaluation cases of an import that did not complete");
          await c.cases.deleteMany(filter);
          await c.caseImports.deleteMany(filter);
        } else continue;
        settled++;
      }
      return settled;
    },

    async listCases(
      principal: Principal,
      input: { organizationId: string; skillId: string; limit: number; cursor: string },
    ) {
      const skill = await deps.access.skill(principal, input.organizationId, input.skillId, SCOPES.evaluationsRead);
      return findPage(c.cases, { skillId: skill.id, organizationId: skill.organizationId }, input);
    },
  };
  return cases;
}

export type Cases = ReturnType<typeof createCases>;
