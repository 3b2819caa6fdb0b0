import type { AssertionResult } from "./domain/assertions.js";
import { buildReport, type CaseResults, type ReportResult, type TargetResult } from "./domain/report.js";
import type { EvaluationCollections, EvaluationRunDoc, ResultDoc } from "./store/evaluation-store.js";

/** A stored result as the report shows it. */
export function targetResultOf(doc: ResultDoc): TargetResult {
  return {
    outcome: doc.outcome,
    runId: doc.runId || null,
    output: doc.outputJson === null ? null : (JSON.parse(doc.outputJson) as TargetResult["output"]),
    assertions: JSON.parse(doc.assertionsJson) as AssertionResult[],
    contractValid: doc.contractValid,
    latencyMs: doc.latencyMs,
    estimatedCostUsd: doc.estimatedCostUsd,
    ...(doc.error ? { error: doc.error } : {}),
  };
}

/** The results grouped per case, in the run's case order (case creation order). */
function caseResultsOf(run: EvaluationRunDoc, docs: ResultDoc[]): CaseResults[] {
  const byCase = new Map<string, CaseResults>(run.caseIds.map((caseId) => [caseId, { caseId, byTarget: {} }]));
  for (const doc of docs) {
    const entry = byCase.get(doc.caseId);
    if (entry) entry.byTarget[doc.label] = targetResultOf(doc);
  }
  return [...byCase.values()];
}

export interface RunCompletion {
  /**
   * Completes the run when every case × target has its result: computes the report and stores it
   * with status "completed". Harmless when repeated or raced: the report and `completedAt` (the
   * last result's time) are computed from the results alone. Resolves to whether it completed.
   */
  completeIfDone(run: EvaluationRunDoc): Promise<boolean>;
  /** The results stored so far, per case, without `change` (for a run still running). */
  partialResults(run: EvaluationRunDoc): Promise<ReportResult[]>;
}

export function createRunCompletion(c: EvaluationCollections): RunCompletion {
  return {
    async completeIfDone(run) {
      if ((await c.results.countDocuments({ evaluationRunId: run._id })) < run.itemCount) return false;
      const docs = await c.results.find({ evaluationRunId: run._id });
      const violations = new Map(
        docs.filter((d) => d.contractMessage).map((d) => [`${d.caseId}:${d.label}`, d.contractMessage as string]),
      );
      const report = buildReport(
        run.targets.map((t) => ({
          label: t.label,
          skillVersionId: t.skillVersionId,
          inputSchema: JSON.parse(t.inputSchemaJson || "{}"),
          outputSchema: JSON.parse(t.outputSchemaJson || "{}"),
        })),
        caseResultsOf(run, docs),
        violations,
      );
      const completedAt = new Date(Math.max(...docs.map((d) => d.createdAt.getTime())));
      await c.runs.updateOne(
        { _id: run._id },
        {
          $set: {
            status: "completed",
            resultsJson: JSON.stringify(report.results),
            summaryJson: JSON.stringify(report.summary),
            contractValidityJson: JSON.stringify(report.contractValidity),
            completedAt,
          },
        },
      );
      return true;
    },
    async partialResults(run) {
      const docs = await c.results.find({ evaluationRunId: run._id });
      return caseResultsOf(run, docs)
        .filter((r) => Object.keys(r.byTarget).length > 0)
        .map((r) => ({ ...r, change: null }));
    },
  };
}
