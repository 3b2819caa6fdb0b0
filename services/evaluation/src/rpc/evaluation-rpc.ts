import type { ConnectRouter } from "@connectrpc/connect";
import { CasesToImportSchema, type CaseToImport } from "@kiln/contracts/bundle";
import { createSchemaAjv } from "@kiln/contracts/schema-ajv";
import { invalidArgument } from "@kiln/kit/errors";
import { answering, answeringOne, answeringPage, withInput, withPrincipal } from "@kiln/kit/principal";
import {
  type CreateEvaluationCasesRequest,
  EvaluationService,
  type ImportEvaluationCasesRequest,
  type StartPromptEvaluationRequest,
  type UpdateEvaluationCaseRequest,
} from "@kiln/proto/evaluation";
import type { Cases } from "../cases.js";
import type { PromptEvaluations } from "../prompt-evaluations.js";
import type { Runs, RunView } from "../runs.js";
import type { CaseDoc, EvaluationRunDoc } from "../store/evaluation-store.js";
import { assertionValueOf, caseToProto, newCaseOf } from "./case-conversions.js";
import { runToProto } from "./evaluation-conversions.js";
import { comparisonToProto } from "./report-to-proto.js";

/** The answers of the evaluation RPCs, by what a use case returns. */
const casesAnswer = answering((docs: CaseDoc[]) => ({ cases: docs.map(caseToProto) }));
const runViewAnswer = answering((view: RunView) => ({ run: runToProto(view.run, view) }));

export function registerEvaluationRpc(
  router: ConnectRouter,
  useCases: { cases: Cases; runs: Runs; prompts: PromptEvaluations },
): void {
  const { cases, runs, prompts } = useCases;
  router.service(EvaluationService, {
    exportEvaluationCases: casesAnswer(cases.exportCases),
    importEvaluationCases: withPrincipal(async (principal, req: ImportEvaluationCasesRequest) => {
      const items = await cases.importCases(principal, { ...req, cases: casesToImport(req.casesJson) });
      // The catalog's ImportItem: a conflict's id and a missing detail are unset.
      return { items: items.map((i) => ({ ...i, id: i.id ?? undefined })) };
    }),
    undoEvaluationCaseImport: answeringOne("deleted", (deleted: number) => deleted)(cases.undoImport),
    createEvaluationCases: casesAnswer(withInput(newCasesOf, cases.createCases)),
    updateEvaluationCase: answeringOne("evaluationCase", caseToProto)(withInput(caseUpdateOf, cases.updateCase)),
    listEvaluationCases: answeringPage("cases", caseToProto)(cases.listCases),
    deleteEvaluationCase: answeringOne("evaluationCase", caseToProto)(cases.deleteCase),
    listEvaluationRuns: answeringPage("runs", (doc: EvaluationRunDoc) => runToProto(doc))(runs.listRuns),
    startEvaluationRun: answeringOne("run", runToProto)(runs.startRun),
    startPromptEvaluation: answeringOne("run", runToProto)(withInput(promptStartOf, prompts.startPromptRun)),
    getEvaluationRun: runViewAnswer(runs.getRun),
    cancelEvaluationRun: runViewAnswer(runs.cancelRun),
    compareEvaluationRuns: answering(comparisonToProto)(runs.compareRuns),
  });
}

const newCasesOf = (req: CreateEvaluationCasesRequest) => ({
  organizationId: req.organizationId,
  skillId: req.skillId,
  cases: req.cases.map((c, i) => newCaseOf(c, `cases[${i}].assertions`)),
});

const promptStartOf = (req: StartPromptEvaluationRequest) => ({
  ...req,
  versionIds: [...req.versionIds],
  labels: [...req.labels],
  models: [...req.models],
  assertions: req.assertions.map(assertionValueOf),
});

const caseUpdateOf = (req: UpdateEvaluationCaseRequest) => ({
  organizationId: req.organizationId,
  skillId: req.skillId,
  caseId: req.caseId,
  evaluationCase: newCaseOf(req.evaluationCase, "evaluationCase.assertions"),
});

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
