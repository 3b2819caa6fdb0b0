import type { ConnectRouter } from "@connectrpc/connect";
import { CasesToImportSchema, type CaseToImport } from "@kiln/contracts/bundle";
import { invalidArgument } from "@kiln/kit/errors";
import { createSchemaAjv } from "@kiln/kit/json-schema";
import { principalOf } from "@kiln/kit/principal";
import { EvaluationService } from "@kiln/proto/evaluation";
import type { Cases } from "../cases.js";
import type { Runs } from "../runs.js";
import { caseToProto, newCaseOf } from "./case-conversions.js";
import { runToProto } from "./evaluation-conversions.js";
import { comparisonToProto } from "./report-to-proto.js";

export function registerEvaluationRpc(router: ConnectRouter, useCases: { cases: Cases; runs: Runs }): void {
  const { cases, runs } = useCases;
  router.service(EvaluationService, {
    async exportEvaluationCases(req, ctx) {
      return { cases: (await cases.exportCases(principalOf(ctx), req)).map(caseToProto) };
    },
    async importEvaluationCases(req, ctx) {
      const items = await cases.importCases(principalOf(ctx), { ...req, cases: casesToImport(req.casesJson) });
      // The catalog's ImportItem: a conflict's id and a missing detail are unset.
      return { items: items.map((i) => ({ ...i, id: i.id ?? undefined })) };
    },
    async undoEvaluationCaseImport(req, ctx) {
      return { deleted: await cases.undoImport(principalOf(ctx), req) };
    },
    async createEvaluationCases(req, ctx) {
      const docs = await cases.createCases(principalOf(ctx), {
        organizationId: req.organizationId,
        skillId: req.skillId,
        cases: req.cases.map((c, i) => newCaseOf(c, `cases[${i}].assertions`)),
      });
      return { cases: docs.map(caseToProto) };
    },
    async updateEvaluationCase(req, ctx) {
      const doc = await cases.updateCase(principalOf(ctx), {
        organizationId: req.organizationId,
        skillId: req.skillId,
        caseId: req.caseId,
        evaluationCase: newCaseOf(req.evaluationCase, "evaluationCase.assertions"),
      });
      return { evaluationCase: caseToProto(doc) };
    },
    async listEvaluationCases(req, ctx) {
      const page = await cases.listCases(principalOf(ctx), req);
      return { cases: page.items.map(caseToProto), nextCursor: page.nextCursor };
    },
    async startEvaluationRun(req, ctx) {
      return { run: runToProto(await runs.startRun(principalOf(ctx), req)) };
    },
    async getEvaluationRun(req, ctx) {
      const view = await runs.getRun(principalOf(ctx), req);
      return { run: runToProto(view.run, view) };
    },
    async cancelEvaluationRun(req, ctx) {
      const view = await runs.cancelRun(principalOf(ctx), req);
      return { run: runToProto(view.run, view) };
    },
    async compareEvaluationRuns(req, ctx) {
      return comparisonToProto(await runs.compareRuns(principalOf(ctx), req));
    },
  });
}

const validCasesToImport = createSchemaAjv().compile(CasesToImportSchema);

/** The cases of an import request, in the shape the bundle's schema gives them (contracts/bundle.ts). */
function casesToImport(text: string): CaseToImport[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!validCasesToImport(value)) {
    throw invalidArgument("casesJson must be a JSON array of {skillId, skillCreated, field, case}", [
      { field: "casesJson", issue: "is malformed" },
    ]);
  }
  return value as CaseToImport[];
}
