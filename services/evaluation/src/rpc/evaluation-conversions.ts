import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Assertion } from "@kiln/contracts/assertions";
import type { EvaluationRunSchema } from "@kiln/proto/evaluation";
import type { RunView } from "../runs.js";
import type { EvaluationRunDoc, TargetDoc } from "../store/evaluation-store.js";
import { contractValidityOf, resultsOf, summaryOf } from "../store/stored-report.js";
import { assertionToProto } from "./case-conversions.js";
import { caseResultToProto, contractValidityToProto, summaryToProto } from "./report-to-proto.js";

/**
 * A run as the proto carries it: its results (those stored so far while it runs, `view.results`),
 * and once it has completed or was cancelled its summary and contract validity.
 */
export function runToProto(doc: EvaluationRunDoc, view?: RunView): MessageInitShape<typeof EvaluationRunSchema> {
  return {
    id: doc._id,
    skillId: doc.skillId,
    organizationId: doc.organizationId,
    status: doc.status,
    targets: doc.targets.map(targetToProto),
    results: (view?.results ?? resultsOf(doc.resultsJson)).map(caseResultToProto),
    summary: summaryProto(doc.summaryJson),
    contractValidity: contractValidityProto(doc.contractValidityJson),
    createdAt: timestampFromDate(doc.createdAt),
    completedAt: doc.completedAt ? timestampFromDate(doc.completedAt) : undefined,
    repeats: doc.repeats ?? 1,
    datasetId: doc.datasetId ?? "",
    datasetVersion: doc.datasetVersion ?? 0,
    promptId: doc.promptId ?? "",
    assertions: (JSON.parse(doc.assertionsJson ?? "[]") as Assertion[]).map(assertionToProto),
  };
}

const targetToProto = (t: TargetDoc) => ({
  label: t.label,
  skillVersionId: t.skillVersionId,
  promptVersionId: t.promptVersionId ?? "",
  version: t.version ?? 0,
  promptLabel: t.promptLabel ?? "",
  model: t.model ?? "",
});

function summaryProto(summaryJson: string) {
  const summary = summaryOf(summaryJson);
  return summary ? summaryToProto(summary) : undefined;
}

function contractValidityProto(contractValidityJson: string) {
  const validity = contractValidityOf(contractValidityJson);
  return validity ? contractValidityToProto(validity) : undefined;
}
