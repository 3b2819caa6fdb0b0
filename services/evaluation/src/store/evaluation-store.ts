import { type Collection, isDuplicateKeyError, type Store } from "@kiln/kit/store";
import type { DatasetItemDoc } from "../datasets/dataset-store.js";
import type { JudgeRun, Usage } from "../domain/report.js";

/** One evaluation case. User JSON (input, expected output, assertions) is JSON text (kit/store encodeJson). */
export interface CaseDoc {
  _id: string;
  skillId: string;
  organizationId: string;
  name: string;
  inputJson: string;
  expectedOutputJson: string | null;
  assertionsJson: string;
  createdAt: Date;
  /** The import that made it (docs/bundles.md): undoing that import deletes it. */
  importId?: string;
  /** Stored by an import whose outcome this service has not learnt yet (the sweep asks the catalog). */
  importPending?: boolean;
  importedAt?: Date;
}

/** Which case an import made from which case of a bundle (`_id`: `<organizationId>/<id in the bundle>`). */
export interface CaseImportDoc {
  _id: string;
  organizationId: string;
  caseId: string;
  importId: string;
}

/** "draft", "published", or a label of the skill (docs/labels.md). */
export type TargetLabel = string;

/**
 * A skill version an evaluation run executes, with the schemas its contract check compares; or,
 * in a prompt evaluation (`skillVersionId` ""), a prompt version on a model.
 */
export interface TargetDoc {
  /** The target's key in the report: a skill run's label, a prompt evaluation's `v<n>` or label, with `@<model>`. */
  label: TargetLabel;
  skillVersionId: string;
  inputSchemaJson: string;
  outputSchemaJson: string;
  promptVersionId?: string;
  version?: number;
  /** The label the prompt version was resolved through, when the start named labels. */
  promptLabel?: string;
  /** The model the prompt version runs on, when the start named models. */
  model?: string;
}

export type RunStatus = "queued" | "running" | "completed" | "failed" | "cancelled";

export interface EvaluationRunDoc {
  _id: string;
  /** "" for a prompt evaluation. */
  skillId: string;
  /** A prompt evaluation's prompt (docs/api.md "Prompt evaluations"). */
  promptId?: string;
  /** A prompt evaluation's assertions, applied to every item ([{type, …}] as JSON text). */
  assertionsJson?: string;
  organizationId: string;
  status: RunStatus;
  targets: TargetDoc[];
  /**
   * In case creation order (the order of the report's results), as JSON text: every worker reads
   * the run for every item it takes, and FerretDB decodes one long string much faster than an
   * array of thousands of values. Runs stored before hold `caseIds` instead: read with caseIdsOf.
   */
  caseIdsJson?: string;
  caseIds?: string[];
  /** Attempts per case and target (1 when absent: runs stored before repeats existed). */
  repeats?: number;
  /** A run on a dataset (docs/datasets.md): its case ids are the dataset's item ids at this version. */
  datasetId?: string;
  datasetVersion?: number;
  /** cases × targets × repeats: the run completes when it has this many results. */
  itemCount: number;
  /** The outbox flag: false until every work message reached the bus. */
  workPublished: boolean;
  /** The report (api.md "Evaluations"), JSON text; "[]" / "{}" until completed. */
  resultsJson: string;
  summaryJson: string;
  contractValidityJson: string;
  createdAt: Date;
  /** When it completed, or was cancelled. */
  completedAt: Date | null;
}

/**
 * One attempt of a case on one target. `_id` is `resultIdOf(…)`: the insert on it is
 * the only atomic operation FerretDB offers across processes, so whatever redelivery does, a case
 * has exactly one result per target.
 */
export interface ResultDoc {
  _id: string;
  evaluationRunId: string;
  caseId: string;
  label: TargetLabel;
  /** 0-based (absent: 0). */
  attempt?: number;
  outcome: "pass" | "fail" | "error";
  /** The skill run, "" when none was stored. */
  runId: string;
  /** `{text, json?}` as JSON text; null when the run produced no output. */
  outputJson: string | null;
  /** [{type, passed, message}] as JSON text. */
  assertionsJson: string;
  /** null when there was no output to check. */
  contractValid: boolean | null;
  contractMessage: string | null;
  latencyMs: number;
  estimatedCostUsd: number | null;
  /** The skill run's tokens; null (or absent) when no run was stored. */
  usage?: Usage | null;
  /** The llm_judge calls that graded it. */
  judgeRuns?: JudgeRun[];
  error: { code: string; message: string } | null;
  createdAt: Date;
}

/** The case ids of a run, in report order. */
export function caseIdsOf(run: Pick<EvaluationRunDoc, "caseIds" | "caseIdsJson">): string[] {
  return run.caseIds ?? (JSON.parse(run.caseIdsJson ?? "[]") as string[]);
}

/**
 * How many results of a run the workers stored, one small document per run bumped after each
 * result: a hint, so that the exact count (a scan of the results on FerretDB) is made once the run
 * looks done rather than after every result.
 */
export interface ProgressDoc {
  _id: string;
  resultsIn?: number;
  /** Set by a cancel, with the run's status: the workers read it here for every item. */
  cancelled?: true;
}

/**
 * Updates a run's progress document, creating it if need be. Two first upserts racing make one of
 * them fail on the unique `_id` (MongoDB and FerretDB alike): that one is applied again as a plain
 * update of the document the other created.
 */
export async function updateProgress(
  progress: Collection<ProgressDoc>,
  evaluationRunId: string,
  update: { $inc: { resultsIn: 1 } } | { $set: { cancelled: true } },
): Promise<void> {
  try {
    await progress.updateOne({ _id: evaluationRunId }, update, { upsert: true });
  } catch (e) {
    if (!isDuplicateKeyError(e)) throw e;
    await progress.updateOne({ _id: evaluationRunId }, update);
  }
}

/** `${evaluationRunId}:${caseId}:${label}`, then `:${attempt}` from the second attempt on. */
export const resultIdOf = (evaluationRunId: string, caseId: string, label: string, attempt = 0) =>
  `${evaluationRunId}:${caseId}:${label}${attempt > 0 ? `:${attempt}` : ""}`;

export interface EvaluationCollections {
  cases: Collection<CaseDoc>;
  runs: Collection<EvaluationRunDoc>;
  results: Collection<ResultDoc>;
  progress: Collection<ProgressDoc>;
  caseImports: Collection<CaseImportDoc>;
  /** Read by the workers for runs on a dataset (datasets/dataset-store.ts owns it). */
  datasetItems: Collection<DatasetItemDoc>;
}

export function evaluationCollections(store: Store): EvaluationCollections {
  return {
    cases: store.collection<CaseDoc>("evaluation_cases"),
    runs: store.collection<EvaluationRunDoc>("evaluation_runs"),
    results: store.collection<ResultDoc>("evaluation_results"),
    progress: store.collection<ProgressDoc>("evaluation_progress"),
    caseImports: store.collection<CaseImportDoc>("evaluation_case_imports"),
    datasetItems: store.collection<DatasetItemDoc>("dataset_items"),
  };
}

export async function ensureEvaluationIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("evaluation_cases", [
    { keys: { skillId: 1, _id: -1 } },
    { keys: { organizationId: 1, _id: 1 } },
    { keys: { importId: 1 } },
    { keys: { importPending: 1, importedAt: 1 } },
  ]);
  await store.ensureIndexes("evaluation_case_imports", [{ keys: { importId: 1 } }]);
  await store.ensureIndexes("evaluation_runs", [
    { keys: { workPublished: 1, _id: 1 } },
    { keys: { skillId: 1, _id: -1 } },
    { keys: { promptId: 1, _id: -1 } },
  ]);
  await store.ensureIndexes("evaluation_results", [{ keys: { evaluationRunId: 1 } }]);
}
