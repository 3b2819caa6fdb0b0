/** The view schemas of evaluation cases, runs and comparisons (docs/api.md "Evaluations"). */
import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import { MAX_JSON_BYTES } from "../json-limits.js";
import { Body, Nullable, OneOf, ref, Timestamp } from "../schemas.js";
import { JsonObject, JsonValue, Name } from "./catalog-requests.js";
import { FreeJson } from "./catalog-views.js";
import { ASSERTION_TYPES, Assertion, AssertionView, TargetLabel } from "./evaluation-assertion-views.js";
import { OutputView, RunErrorView, UsageView } from "./run-views.js";

export const NewCase = Body({
  name: Type.Optional(Name),
  input: JsonObject("the skill input, matching its inputSchema", LIMITS.variablesBytes),
  expectedOutput: Type.Optional(
    JsonValue(
      "the output the skill should give (alone it means an equals assertion); null: none",
      LIMITS.expectedOutputBytes,
    ),
  ),
  assertions: Type.Optional(
    Type.Array(Assertion, { maxItems: LIMITS.assertionsPerCase, [MAX_JSON_BYTES]: LIMITS.assertionsBytes }),
  ),
});

export const EvaluationCaseView = Type.Object(
  {
    id: Type.String(),
    skillId: Type.String(),
    organizationId: Type.String(),
    name: Type.String(),
    input: FreeJson,
    expectedOutput: Type.Unknown({ description: "null when the case has none" }),
    assertions: Type.Array(ref(AssertionView), { description: "as created" }),
    createdAt: Timestamp,
  },
  { $id: "EvaluationCase" },
);

/** What starting an evaluation run (a skill's or a prompt's) answers: 202, the run queued. */
export const EvaluationStartedView = Type.Object({
  id: Type.String(),
  evaluationRunId: Type.String({ description: "equal to id" }),
  status: Type.Literal("queued"),
});

export type EvaluationStatus = "queued" | "running" | "completed" | "failed" | "cancelled";
export const EvaluationStatus = OneOf(["queued", "running", "completed", "failed", "cancelled"], {
  description: "cancelled: stopped by POST …/cancel; its report covers the attempts that finished",
});

const Usage = ref(UsageView);

export const JudgeRunView = Type.Object({
  runId: Type.String({ description: "the judge's stored run (GET /api/judge-runs/:id)" }),
  usage: Usage,
  estimatedCostUsd: Nullable(Type.Number({ description: "null when the judge's model has no price" })),
});

const AttemptView = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  outcome: OneOf(["pass", "fail", "error"]),
  runId: Nullable(Type.String()),
  latencyMs: Type.Integer(),
  estimatedCostUsd: Nullable(Type.Number()),
  usage: Nullable(Usage),
  judgeRuns: Type.Array(JudgeRunView),
});

export const AssertionResultView = Type.Object({
  type: OneOf(ASSERTION_TYPES),
  passed: Type.Boolean(),
  message: Type.String(),
});

export const TargetResultView = Type.Object({
  outcome: OneOf(["pass", "fail", "error"], {
    description:
      "over every attempt: pass when all passed, error when none could run, else fail; error: the skill run failed, or could not be started",
  }),
  runId: Nullable(Type.String({ description: "the skill run (GET /api/skill-runs/:id); null when none was stored" })),
  output: OutputView,
  assertions: Type.Array(AssertionResultView),
  contractValid: Nullable(
    Type.Boolean({ description: "the output conforms to the version's output schema; null without an output" }),
  ),
  latencyMs: Type.Integer(),
  estimatedCostUsd: Nullable(Type.Number()),
  usage: Nullable(Usage),
  judgeRuns: Type.Array(JudgeRunView, { description: "the llm_judge calls that graded the first attempt" }),
  error: Type.Optional(ref(RunErrorView)),
  attempts: Type.Array(AttemptView, { description: "every attempt, in order; runId etc. above are the first's" }),
  passRate: Type.Number({ description: "passing attempts / attempts" }),
  verdict: OneOf(["passed", "failed", "flaky"], { description: "every attempt passed, none did, or some did" }),
});

export const Change = Nullable(OneOf(["unchanged", "fixed", "regressed", "output_changed"]), {
  description:
    "with two targets, the live one (published or production, else the first named) before and the other after (draft against published: published before): fixed / regressed when the pass rate rose / dropped by at least 0.25, else unchanged or output_changed by the first attempts' outputs; null with one target",
});

const TargetSummaryView = Type.Object({
  passed: Type.Integer(),
  failed: Type.Integer(),
  errored: Type.Integer(),
  flaky: Type.Integer({ description: "cases whose attempts disagree (counted in failed too)" }),
  passRate: Type.Number({ description: "the mean of the cases' pass rates, 0 to 1" }),
  attempts: Type.Integer(),
  avgLatencyMs: Type.Number(),
  latencyMs: Type.Object({ p50: Type.Number(), p95: Type.Number(), p99: Type.Number() }),
  usage: Usage,
  totalCostUsd: Nullable(Type.Number({ description: "skill and judge runs; null when any is unpriced" })),
  pricedCostUsd: Type.Number({ description: "what the priced runs cost" }),
  unpricedRuns: Type.Integer({ description: "runs of a model without a price, left out of pricedCostUsd" }),
  judge: Type.Object({ runs: Type.Integer(), usage: Usage, estimatedCostUsd: Nullable(Type.Number()) }),
});

export const ChangesView = Type.Object({
  fixed: Type.Integer(),
  regressed: Type.Integer(),
  outputChanged: Type.Integer(),
  unchanged: Type.Integer(),
  stillFailing: Type.Integer({ description: "failed every attempt before and after (also counted above)" }),
  flaky: Type.Integer({ description: "flaky after (also counted above)" }),
});

export const SummaryView = Type.Object({
  repeats: Type.Integer({ description: "attempts per case and target" }),
  byTarget: Type.Record(Type.String(), TargetSummaryView),
  changes: ChangesView,
  text: Type.String({ description: "the summary in one line" }),
});

const ContractValidityView = Type.Object({
  valid: Type.Boolean(),
  violations: Type.Array(
    Type.Object({
      caseId: Type.Optional(Type.String()),
      target: TargetLabel,
      kind: OneOf(["output_schema"]),
      message: Type.String(),
    }),
  ),
  breakingChanges: Type.Array(
    Type.Object({
      kind: OneOf(["input_required_added", "input_type_changed", "output_field_removed", "output_type_changed"]),
      path: Type.String(),
      message: Type.String(),
    }),
  ),
});

export const EvaluationRunView = Type.Object(
  {
    id: Type.String(),
    evaluationRunId: Type.String({ description: "equal to id" }),
    skillId: Type.String(),
    status: EvaluationStatus,
    repeats: Type.Integer({ minimum: 1, maximum: 20 }),
    datasetId: Nullable(Type.String(), {
      description: "the dataset it ran on (docs/datasets.md); then each result's caseId is a dataset item's id",
    }),
    datasetVersion: Nullable(Type.Integer({ minimum: 1 }), { description: "the dataset's version it ran on" }),
    targets: Type.Array(Type.Object({ label: TargetLabel, skillVersionId: Type.String() })),
    results: Type.Array(
      Type.Object({
        caseId: Type.String(),
        byTarget: Type.Record(Type.String(), TargetResultView, {
          description: "by target: draft, published or a label",
        }),
        change: Change,
      }),
      { description: "one per case, in the order of the cases; filled in while the run is running" },
    ),
    summary: Nullable(SummaryView, { description: "null until the run has completed (or was cancelled)" }),
    contractValidity: Nullable(ContractValidityView, {
      description: "null until the run has completed (or was cancelled)",
    }),
    createdAt: Timestamp,
    completedAt: Nullable(Timestamp, { description: "when it completed or was cancelled" }),
  },
  { $id: "EvaluationRun" },
);

/** An evaluation run as its skill's list of runs shows it: every field but the per-case results and the contract check. */
const { results: _results, contractValidity: _validity, ...listedRunFields } = EvaluationRunView.properties;
export const EvaluationRunListItemView = Type.Object(listedRunFields, {
  $id: "EvaluationRunListItem",
  description: "an evaluation run without its per-case results",
});

export const ComparedSideView = Nullable(
  Type.Object({
    outcome: OneOf(["pass", "fail", "error"]),
    verdict: OneOf(["passed", "failed", "flaky"]),
    passRate: Type.Number(),
    attempts: Type.Integer(),
    runId: Nullable(Type.String({ description: "the first attempt's skill run" })),
  }),
  { description: "null when the case is not in that run" },
);

const ComparedRunView = Type.Object({
  evaluationRunId: Type.String(),
  target: TargetLabel,
  skillVersionId: Type.String(),
  repeats: Type.Integer(),
});

export const EvaluationComparisonView = Type.Object(
  {
    base: ComparedRunView,
    head: ComparedRunView,
    results: Type.Array(
      Type.Object({
        caseId: Type.String(),
        base: ComparedSideView,
        head: ComparedSideView,
        change: Change,
      }),
      { description: "head's cases in order, then those only base has" },
    ),
    summary: Type.Object({ changes: ChangesView, text: Type.String() }),
  },
  { $id: "EvaluationComparison" },
);
