/**
 * Online evaluation views (docs/api.md "Online evaluation"): rules, scores and the score summary,
 * and their conversions from the OnlineEvaluationService's messages.
 */
import { assertionMessage } from "@kiln/contracts/assertions";
import type { OnlineRule, OnlineScore, OnlineScoreBucket } from "@kiln/proto/online";
import Type, { type Static } from "typebox";
import { requestJsonText as json } from "../json-limits.js";
import { Nullable, OneOf, ref, Timestamp } from "../schemas.js";
import { Assertion } from "./evaluation-assertion-views.js";
import { assertionView } from "./evaluation-case-mappers.js";
import { judgeRunView } from "./evaluation-view-mappers.js";
import { AssertionResultView, JudgeRunView } from "./evaluation-views.js";
import { answersOf, iso } from "./views.js";

const FilterText = Type.String({ maxLength: 256 });

export const TraceFilterView = Type.Object(
  {
    name: Type.Optional(FilterText),
    model: Type.Optional(FilterText),
    sessionId: Type.Optional(FilterText),
  },
  { additionalProperties: false, description: "generation spans matching every field given" },
);

/** What a rule samples: runs of a prompt, skill or agent (at a label), or ingested generations. */
export const OnlineTargetView = Type.Object(
  {
    kind: OneOf(["prompt", "skill", "agent", "traces"]),
    id: Type.Optional(Type.String({ maxLength: 100, description: "the prompt, skill or agent (not for traces)" })),
    label: Type.Optional(Type.String({ maxLength: 40, description: "only runs resolved through this label" })),
    filter: Type.Optional(TraceFilterView),
  },
  { $id: "OnlineTarget", additionalProperties: false },
);

export const SampleRate = Type.Number({
  description: "the share of matching runs scored, greater than 0 and at most 1",
});
export const RuleAssertions = Type.Array(Assertion, { maxItems: 20 });

export const OnlineRuleView = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    name: Type.String(),
    target: ref(OnlineTargetView),
    sampleRate: Type.Number(),
    assertions: Type.Array(Assertion),
    enabled: Type.Boolean(),
    createdBy: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "OnlineRule" },
);

export const OnlineScoreView = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    ruleId: Type.String(),
    target: Type.Object({
      type: OneOf(["run", "generation"]),
      runId: Type.Optional(Type.String()),
      traceId: Type.Optional(Type.String()),
      spanId: Type.Optional(Type.String()),
    }),
    promptId: Nullable(Type.String()),
    skillId: Nullable(Type.String()),
    agentId: Nullable(Type.String()),
    versionId: Nullable(Type.String({ description: "the version that ran; null for a generation" })),
    label: Nullable(Type.String({ description: "the label the run resolved through" })),
    passed: Type.Boolean({ description: "every assertion passed" }),
    score: Nullable(Type.Number({ description: "mean llm_judge score, 0 to 1; null without a judge" })),
    assertions: Type.Array(AssertionResultView),
    judgeRuns: Type.Array(JudgeRunView, { description: "the judge's calls: stored judge runs with their cost" }),
    judgeCostUsd: Nullable(Type.Number({ description: "null without judge runs or when one has no price" })),
    runCostUsd: Nullable(Type.Number({ description: "what the scored run cost; null when unknown" })),
    occurredAt: Timestamp,
    createdAt: Timestamp,
  },
  { $id: "OnlineScore" },
);

export const OnlineScoreBucketView = Type.Object(
  {
    start: Timestamp,
    versionId: Nullable(Type.String()),
    label: Nullable(Type.String()),
    count: Type.Integer(),
    passed: Type.Integer(),
    passRate: Type.Number(),
    meanScore: Nullable(Type.Number({ description: "mean judge score of the judged scores; null when none" })),
    judged: Type.Integer(),
    judgeCostUsd: Type.Number(),
    runCostUsd: Type.Number({ description: "what the scored runs cost (known costs summed)" }),
  },
  { $id: "OnlineScoreBucket" },
);

export const OnlineScoreSummaryView = Type.Object(
  { bucket: OneOf(["hour", "day"]), buckets: Type.Array(ref(OnlineScoreBucketView)) },
  { $id: "OnlineScoreSummary" },
);

const orNull = (s: string) => s || null;
const { view } = answersOf("evaluation");

export const onlineRuleView = view("online rule", (r: OnlineRule) => {
  const t = r.target;
  const traces = t?.kind === "traces";
  const filter = t?.filter;
  return {
    id: r.id,
    organizationId: r.organizationId,
    name: r.name,
    target: {
      kind: (t?.kind ?? "prompt") as "prompt" | "skill" | "agent" | "traces",
      ...(traces
        ? {
            filter: {
              ...(filter?.name && { name: filter.name }),
              ...(filter?.model && { model: filter.model }),
              ...(filter?.sessionId && { sessionId: filter.sessionId }),
            },
          }
        : { id: t?.id ?? "", ...(t?.label && { label: t.label }) }),
    },
    sampleRate: r.sampleRate,
    assertions: r.assertions.map(assertionView),
    enabled: r.enabled,
    createdBy: r.createdBy,
    createdAt: iso(r.createdAt) ?? "",
    updatedAt: iso(r.updatedAt) ?? "",
  };
});

export const onlineScoreView = (s: OnlineScore) => ({
  id: s.id,
  organizationId: s.organizationId,
  ruleId: s.ruleId,
  target:
    s.targetType === "run"
      ? { type: "run" as const, runId: s.runId }
      : { type: "generation" as const, traceId: s.traceId, spanId: s.spanId },
  promptId: orNull(s.promptId),
  skillId: orNull(s.skillId),
  agentId: orNull(s.agentId),
  versionId: orNull(s.versionId),
  label: orNull(s.label),
  passed: s.passed,
  score: s.score ?? null,
  assertions: s.assertions.map((a) => ({ type: a.type, passed: a.passed, message: a.message })),
  judgeRuns: s.judgeRuns.map(judgeRunView),
  judgeCostUsd: s.judgeCostUsd ?? null,
  runCostUsd: s.runCostUsd ?? null,
  occurredAt: iso(s.occurredAt) ?? "",
  createdAt: iso(s.createdAt) ?? "",
});

export const scoreBucketView = (b: OnlineScoreBucket) => ({
  start: iso(b.start) ?? "",
  versionId: orNull(b.versionId),
  label: orNull(b.label),
  count: b.count,
  passed: b.passed,
  passRate: b.passRate,
  meanScore: b.meanScore ?? null,
  judged: b.judged,
  judgeCostUsd: b.judgeCostUsd,
  runCostUsd: b.runCostUsd,
});

/** A request's target as the service takes it. */
export const targetMessage = (t: Static<typeof OnlineTargetView>) => ({
  kind: t.kind,
  id: t.id ?? "",
  label: t.label ?? "",
  filter: t.filter && { name: t.filter.name ?? "", model: t.filter.model ?? "", sessionId: t.filter.sessionId ?? "" },
});

export const assertionMessages = (assertions: Static<typeof RuleAssertions>) =>
  assertions.map((a) => assertionMessage(a, json));
