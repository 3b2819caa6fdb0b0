import { EVALUATION_EVENTS } from "@kiln/contracts/bus-names";
import type { EvaluationCompletedData } from "@kiln/contracts/events";
import type { Bus } from "@kiln/kit/bus";
import {
  createEventOutbox,
  type EventIntentDoc,
  type EventOutbox,
  eventStream,
  outboxEventOf,
} from "@kiln/kit/bus/outbox";
import type { Logger } from "@kiln/kit/logger";
import type { Store } from "@kiln/kit/store";
import type { AssertionResult } from "./domain/assertions.js";
import { buildReport, type CaseResults, type ReportResult } from "./domain/build-report.js";
import { type AttemptResult, combineAttempts, type Label } from "./domain/report.js";
import {
  caseIdsOf,
  type EvaluationCollections,
  type EvaluationRunDoc,
  type ResultDoc,
} from "./store/evaluation-store.js";

/** A stored attempt as the report reads it. */
export function attemptResultOf(doc: ResultDoc): AttemptResult {
  return {
    outcome: doc.outcome,
    runId: doc.runId || null,
    output: doc.outputJson === null ? null : (JSON.parse(doc.outputJson) as AttemptResult["output"]),
    assertions: JSON.parse(doc.assertionsJson) as AssertionResult[],
    contractValid: doc.contractValid,
    latencyMs: doc.latencyMs,
    estimatedCostUsd: doc.estimatedCostUsd,
    usage: doc.usage ?? null,
    judgeRuns: doc.judgeRuns ?? [],
    ...(doc.error ? { error: doc.error } : {}),
  };
}

/** The results grouped per case and target, attempts in order, in the run's case order (case creation order). */
function caseResultsOf(run: EvaluationRunDoc, docs: ResultDoc[]): CaseResults[] {
  const attempts = new Map<string, ResultDoc[]>();
  for (const doc of docs) {
    const key = `${doc.caseId}\n${doc.label}`;
    attempts.set(key, [...(attempts.get(key) ?? []), doc]);
  }
  return caseIdsOf(run).map((caseId) => {
    const byTarget: CaseResults["byTarget"] = {};
    for (const t of run.targets) {
      const found = attempts.get(`${caseId}\n${t.label}`);
      if (!found) continue;
      found.sort((a, b) => (a.attempt ?? 0) - (b.attempt ?? 0));
      byTarget[t.label as Label] = combineAttempts(found.map(attemptResultOf));
    }
    return { caseId, byTarget };
  });
}

export interface RunCompletion {
  /**
   * Completes the run when every case × target × attempt has its result: computes the report and
   * stores it with status "completed". A cancelled run gets the report of the results it has and
   * stays cancelled (a result that lands after the cancel is added to it). Harmless when repeated
   * or raced: the report and `completedAt` (the last result's time, or the cancel's) are computed
   * from the stored documents alone. Resolves to whether it stored a report.
   */
  completeIfDone(run: EvaluationRunDoc): Promise<boolean>;
  /** The results stored so far, per case, without `change` (for a run still running). */
  partialResults(run: EvaluationRunDoc): Promise<ReportResult[]>;
}

/** Evaluation events (docs/events/evaluation.completed.schema.json): limits retention, a week. */
export const EVALUATION_EVENTS_STREAM = eventStream(EVALUATION_EVENTS.stream, [...EVALUATION_EVENTS.subjects]);

/** The outbox of evaluation events, in the evaluation store (every process that completes runs writes to it). */
export function evaluationEventOutbox(store: Store, bus: Bus, logger: Logger): EventOutbox {
  return createEventOutbox(store.collection<EventIntentDoc>("evaluation_event_outbox"), bus, logger);
}

function completedEvent(run: EvaluationRunDoc, report: ReturnType<typeof buildReport>, cancelled: boolean, at: Date) {
  return outboxEventOf(EVALUATION_EVENTS.completed, {
    type: "evaluation.completed",
    sourceId: run._id,
    organizationId: run.organizationId,
    at,
    data: {
      evaluationRunId: run._id,
      ...(run.promptId ? { promptId: run.promptId } : { skillId: run.skillId }),
      status: cancelled ? "cancelled" : "completed",
      targets: run.targets.map((t) =>
        t.promptVersionId
          ? { label: t.label, promptVersionId: t.promptVersionId, ...(t.model ? { model: t.model } : {}) }
          : { label: t.label, skillVersionId: t.skillVersionId },
      ),
      repeats: run.repeats ?? 1,
      caseCount: report.results.length,
      summary: report.summary.text,
      changes: report.summary.changes,
      contractValid: report.contractValidity.valid,
    } satisfies EvaluationCompletedData,
  });
}

export function createRunCompletion(c: EvaluationCollections, events?: EventOutbox): RunCompletion {
  return {
    async completeIfDone(known) {
      // The status may have changed since the caller read the run (a cancel).
      const run = (await c.runs.findOne({ _id: known._id })) ?? known;
      const cancelled = run.status === "cancelled";
      if (!cancelled && (await c.results.countDocuments({ evaluationRunId: run._id })) < run.itemCount) return false;
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
        caseResultsOf(run, docs).filter((r) => !cancelled || Object.keys(r.byTarget).length > 0),
        violations,
        { repeats: run.repeats ?? 1, cancelled, noun: run.promptId ? "item" : "case" },
      );
      const completedAt = cancelled
        ? (run.completedAt ?? new Date())
        : new Date(Math.max(...docs.map((d) => d.createdAt.getTime())));
      const { modifiedCount } = await c.runs.updateOne(
        // A cancel that lands meanwhile wins: its own report follows.
        cancelled ? { _id: run._id } : { _id: run._id, status: { $ne: "cancelled" } },
        {
          $set: {
            status: cancelled ? "cancelled" : "completed",
            resultsJson: JSON.stringify(report.results),
            summaryJson: JSON.stringify(report.summary),
            contractValidityJson: JSON.stringify(report.contractValidity),
            completedAt,
          },
        },
      );
      // Once per run: a repeat or race publishes the same event id, which the stream de-duplicates.
      if (modifiedCount > 0 || run.status === "completed")
        await events?.add([completedEvent(run, report, cancelled, completedAt)]);
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
