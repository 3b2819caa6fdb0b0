import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EvaluationCaseSchema, EvaluationRunSchema } from "@kiln/proto/evaluation";
import type { RunView } from "../runs.js";
import type { CaseDoc, EvaluationRunDoc } from "../store/evaluation-store.js";

export function caseToProto(doc: CaseDoc): MessageInitShape<typeof EvaluationCaseSchema> {
  return {
    id: doc._id,
    skillId: doc.skillId,
    organizationId: doc.organizationId,
    name: doc.name,
    inputJson: doc.inputJson,
    expectedOutputJson: doc.expectedOutputJson ?? undefined,
    assertionsJson: doc.assertionsJson,
    createdAt: timestampFromDate(doc.createdAt),
  };
}

/** A run as the proto carries it: the report as JSON text (api.md "Evaluations"). */
export function runToProto(doc: EvaluationRunDoc, view?: RunView): MessageInitShape<typeof EvaluationRunSchema> {
  return {
    id: doc._id,
    skillId: doc.skillId,
    organizationId: doc.organizationId,
    status: doc.status,
    targets: doc.targets.map((t) => ({ label: t.label, skillVersionId: t.skillVersionId })),
    resultsJson: view?.results ? JSON.stringify(view.results) : doc.resultsJson,
    summaryJson: doc.summaryJson,
    contractValidityJson: doc.contractValidityJson,
    createdAt: timestampFromDate(doc.createdAt),
    completedAt: doc.completedAt ? timestampFromDate(doc.completedAt) : undefined,
    repeats: doc.repeats ?? 1,
  };
}
