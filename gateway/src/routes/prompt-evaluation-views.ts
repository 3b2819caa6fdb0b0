/**
 * Prompt evaluations as the REST API shows them (docs/api.md "Prompt evaluations"): an evaluation
 * run whose targets are prompt versions on models, its results by dataset item. The outcome,
 * summary and comparison shapes are those of a skill's evaluation runs (evaluation-views.ts).
 */
import type { CompareEvaluationRunsResponse, EvaluationRun, EvaluationTarget } from "@kiln/proto/evaluation";
import Type from "typebox";
import { Nullable, ref, Timestamp } from "../schemas.js";
import { AssertionView } from "./evaluation-assertion-views.js";
import { assertionView } from "./evaluation-case-mappers.js";
import { comparedSideView, comparisonSummaryView, summaryView, targetResultView } from "./evaluation-view-mappers.js";
import {
  Change,
  ChangesView,
  ComparedSideView,
  EvaluationStatus,
  SummaryView,
  TargetResultView,
} from "./evaluation-views.js";
import { answersOf, iso } from "./views.js";

const TargetKey = Type.String({
  description: 'the target in the report: "v<n>" or the label\'s name, with "@<model>" when models were named',
});

const PromptTargetView = Type.Object({
  key: TargetKey,
  promptVersionId: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  label: Nullable(Type.String(), { description: "the label the version was resolved through, when labels were named" }),
  model: Nullable(Type.String(), { description: "the model it ran on; null: the version's own" }),
});

export const PromptEvaluationView = Type.Object(
  {
    id: Type.String(),
    evaluationRunId: Type.String({ description: "equal to id" }),
    promptId: Type.String(),
    status: EvaluationStatus,
    repeats: Type.Integer({ minimum: 1, maximum: 20 }),
    datasetId: Type.String(),
    datasetVersion: Type.Integer({ minimum: 1 }),
    targets: Type.Array(PromptTargetView, { description: "each version on each model, in that order" }),
    assertions: Type.Array(ref(AssertionView), { description: "as started: every item's output is judged by them" }),
    results: Type.Array(
      Type.Object({
        itemId: Type.String({ description: "the dataset item" }),
        byTarget: Type.Record(Type.String(), TargetResultView, { description: "by target key" }),
        change: Change,
      }),
      { description: "one per item, in the dataset's order; filled in while the run is running" },
    ),
    summary: Nullable(SummaryView, { description: "null until the run has completed (or was cancelled)" }),
    createdAt: Timestamp,
    completedAt: Nullable(Timestamp, { description: "when it completed or was cancelled" }),
  },
  { $id: "PromptEvaluation" },
);

const { results: _results, ...listedFields } = PromptEvaluationView.properties;
export const PromptEvaluationListItemView = Type.Object(listedFields, {
  $id: "PromptEvaluationListItem",
  description: "a prompt evaluation without its per-item results",
});

const ComparedPromptRunView = Type.Object({
  evaluationRunId: Type.String(),
  target: TargetKey,
  promptVersionId: Type.String(),
  repeats: Type.Integer(),
});

export const PromptEvaluationComparisonView = Type.Object(
  {
    base: ComparedPromptRunView,
    head: ComparedPromptRunView,
    results: Type.Array(
      Type.Object({ itemId: Type.String(), base: ComparedSideView, head: ComparedSideView, change: Change }),
      { description: "head's items in order, then those only base has" },
    ),
    summary: Type.Object({ changes: ChangesView, text: Type.String() }),
  },
  { $id: "PromptEvaluationComparison" },
);

const { present, view } = answersOf("evaluation");
type ChangeName = "unchanged" | "fixed" | "regressed" | "output_changed";

const targetView = (t: EvaluationTarget) => ({
  key: t.label,
  promptVersionId: t.promptVersionId,
  version: t.version,
  label: t.promptLabel || null,
  model: t.model || null,
});

export const promptEvaluationView = view("run", (run: EvaluationRun) => ({
  id: run.id,
  evaluationRunId: run.id,
  promptId: run.promptId,
  status: run.status as EvaluationStatus,
  repeats: run.repeats || 1,
  datasetId: run.datasetId,
  datasetVersion: run.datasetVersion,
  targets: run.targets.map(targetView),
  assertions: run.assertions.map(assertionView),
  results: run.results.map((r) => ({
    itemId: r.caseId,
    byTarget: Object.fromEntries(Object.entries(r.byTarget).map(([key, t]) => [key, targetResultView(t)])),
    change: (r.change ?? null) as ChangeName | null,
  })),
  summary: run.summary ? summaryView(run.summary) : null,
  createdAt: iso(run.createdAt) ?? "",
  completedAt: iso(run.completedAt),
}));

export const promptEvaluationListItemView = (run: EvaluationRun) => {
  const { results: _r, ...item } = promptEvaluationView(run);
  return item;
};

export function promptEvaluationComparisonView(c: CompareEvaluationRunsResponse) {
  const side = (s: NonNullable<CompareEvaluationRunsResponse["base"]>) => ({
    evaluationRunId: s.evaluationRunId,
    target: s.target,
    promptVersionId: s.promptVersionId,
    repeats: s.repeats,
  });
  return {
    base: side(present(c.base, "base run")),
    head: side(present(c.head, "head run")),
    results: c.results.map((r) => ({
      itemId: r.caseId,
      base: comparedSideView(r.base),
      head: comparedSideView(r.head),
      change: (r.change ?? null) as ChangeName | null,
    })),
    summary: comparisonSummaryView(present(c.summary, "comparison summary")),
  };
}
