import { LIMITS } from "@kiln/kit/limits";
import type { AnnotationQueue, ItemContent, QueueItem, QueueProgress, Score, ScoreConfig } from "@kiln/proto/review";
import Type from "typebox";
import { ACCESS_TOKEN_ONLY, operations } from "../http/operation.js";
import { Nullable, OneOf, ref, Timestamp } from "../schemas.js";
import { AnyRun, anyRunView } from "./run-list-routes.js";
import { TraceDetailView, traceDetailView } from "./trace-views.js";
import { answersOf, iso } from "./views.js";

/** Annotation queue and item views (docs/review.md) and their conversions from the ReviewService's messages. */

/** The OpenAPI group of every review route (public beta). */
export const reviewOp = operations({ tags: ["review"], stability: "beta" });
/** The reviewer's own routes: a member's token or session, not an API key (docs/review.md "Who may do what"). */
export const reviewerOp = operations({ tags: ["review"], stability: "beta", security: ACCESS_TOKEN_ONLY });

export const SCORE_KINDS = ["boolean", "numeric", "categorical"] as const;
export const ITEM_STATUSES = ["pending", "in_review", "completed", "skipped"] as const;
export const RULE_KINDS = ["prompt", "skill", "agent"] as const;

export const ScoreConfigView = Type.Object(
  {
    name: Type.String({ pattern: "^[A-Za-z0-9_.-]{1,64}$" }),
    kind: OneOf(SCORE_KINDS),
    min: Type.Optional(Type.Number({ description: "numeric: the lowest score" })),
    max: Type.Optional(Type.Number({ description: "numeric: the highest score" })),
    options: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: LIMITS.scoreOptions,
        description: "categorical: the choices",
      }),
    ),
    required: Type.Boolean({ default: false }),
  },
  { $id: "ScoreConfig", additionalProperties: false },
);

export const AutoAddRuleView = Type.Object(
  {
    kind: OneOf(RULE_KINDS),
    id: Type.String({ minLength: 1, maxLength: 64, description: "the prompt, skill or agent id" }),
    label: Type.Optional(Type.String({ maxLength: 200, description: "only runs of the version this label points at" })),
    sampleRate: Type.Number({ minimum: 0, maximum: 1, description: "the share of runs added, 0 to 1" }),
  },
  { $id: "AutoAddRule", additionalProperties: false },
);

const Counts = {
  pending: Type.Integer(),
  inReview: Type.Integer(),
  completed: Type.Integer(),
  skipped: Type.Integer(),
};

export const QueueProgressView = Type.Object(
  {
    ...Counts,
    reviewers: Type.Array(
      Type.Object({
        reviewerId: Type.String(),
        inReview: Type.Integer(),
        completed: Type.Integer(),
        skipped: Type.Integer(),
      }),
    ),
  },
  { $id: "QueueProgress", description: "an item whose lease ended counts as pending" },
);

export const AnnotationQueueView = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    name: Type.String(),
    description: Type.String(),
    scoreConfigs: Type.Array(ref(ScoreConfigView)),
    autoAdd: Nullable(ref(AutoAddRuleView)),
    createdAt: Timestamp,
    createdBy: Type.String({ description: "the user or API key that made it" }),
    updatedAt: Timestamp,
    progress: Type.Optional(ref(QueueProgressView)),
  },
  { $id: "AnnotationQueue", description: "lists leave out progress" },
);

export const ScoreValue = Type.Union([Type.Boolean(), Type.Number(), Type.String()]);

export const QueueItemView = Type.Object(
  {
    id: Type.String(),
    queueId: Type.String(),
    target: Type.Union([
      Type.Object({ type: OneOf(["run"]), runId: Type.String() }),
      Type.Object({ type: OneOf(["trace"]), traceId: Type.String() }),
    ]),
    status: OneOf(ITEM_STATUSES),
    addedBy: Type.String({ description: 'a user id, an API key id, or "rule:<queue id>"' }),
    addedAt: Timestamp,
    assignee: Nullable(Type.String({ description: "the reviewer holding it, or who completed or skipped it" })),
    leaseUntil: Nullable(Timestamp),
    review: Nullable(
      Type.Object({
        scores: Type.Record(Type.String(), ScoreValue),
        comment: Type.String(),
        reviewerId: Type.String(),
        reviewedAt: Timestamp,
      }),
    ),
    evaluationCase: Nullable(Type.Object({ id: Type.String(), skillId: Type.String() })),
  },
  { $id: "QueueItem" },
);

export const QueueItemWithContentView = Type.Object(
  {
    item: ref(QueueItemView),
    content: Type.Object({
      run: Nullable(AnyRun, { description: "a run item's run; null when it no longer exists" }),
      messages: Type.Array(
        Type.Object({
          role: Type.String(),
          content: Type.String(),
          step: Nullable(Type.String({ description: "the skill step it was sent for" })),
        }),
        {
          description: "what the run sent its model, rendered from its prompt versions; none for traces and agent runs",
        },
      ),
      trace: Nullable(ref(TraceDetailView), { description: "a trace item's root span and model calls" }),
    }),
  },
  { $id: "QueueItemWithContent" },
);

export const ClaimView = Type.Object(
  { item: Nullable(ref(QueueItemView)), content: Nullable(QueueItemWithContentView.properties.content) },
  { $id: "QueueClaim", description: "item null: nothing left to review" },
);

const fromReview = answersOf("evaluation");

const configView = (c: ScoreConfig) => ({
  name: c.name,
  kind: c.kind as (typeof SCORE_KINDS)[number],
  ...(c.kind === "numeric" && { min: c.min ?? 0, max: c.max ?? 0 }),
  ...(c.kind === "categorical" && { options: c.options }),
  required: c.required,
});

const progressView = (p: QueueProgress) => ({
  pending: p.pending,
  inReview: p.inReview,
  completed: p.completed,
  skipped: p.skipped,
  reviewers: p.reviewers.map((r) => ({
    reviewerId: r.reviewerId,
    inReview: r.inReview,
    completed: r.completed,
    skipped: r.skipped,
  })),
});

export const queueView = fromReview.view("queue", (q: AnnotationQueue) => ({
  id: q.id,
  organizationId: q.organizationId,
  name: q.name,
  description: q.description,
  scoreConfigs: q.scoreConfigs.map(configView),
  autoAdd: q.autoAdd
    ? {
        kind: q.autoAdd.kind as (typeof RULE_KINDS)[number],
        id: q.autoAdd.id,
        ...(q.autoAdd.label && { label: q.autoAdd.label }),
        sampleRate: q.autoAdd.sampleRate,
      }
    : null,
  createdAt: iso(q.createdAt) ?? "",
  createdBy: q.createdBy,
  updatedAt: iso(q.updatedAt) ?? "",
  ...(q.progress && { progress: progressView(q.progress) }),
}));

const scoreValue = (s: Score) => s.value.value ?? null;

export const itemView = fromReview.view("item", (i: QueueItem) => ({
  id: i.id,
  queueId: i.queueId,
  target:
    i.targetType === "trace"
      ? { type: "trace" as const, traceId: i.targetId }
      : { type: "run" as const, runId: i.targetId },
  status: i.status as (typeof ITEM_STATUSES)[number],
  addedBy: i.addedBy,
  addedAt: iso(i.addedAt) ?? "",
  assignee: i.assignee || null,
  leaseUntil: iso(i.leaseUntil),
  review: i.review
    ? {
        scores: Object.fromEntries(i.review.scores.map((s) => [s.name, scoreValue(s) as boolean | number | string])),
        comment: i.review.comment,
        reviewerId: i.review.reviewerId,
        reviewedAt: iso(i.review.reviewedAt) ?? "",
      }
    : null,
  evaluationCase: i.evaluationCaseId ? { id: i.evaluationCaseId, skillId: i.evaluationCaseSkillId } : null,
}));

export const contentView = (c: ItemContent | undefined) => ({
  run: c?.run ? anyRunView(c.run) : null,
  messages: (c?.messages ?? []).map((m) => ({ role: m.role, content: m.content, step: m.step || null })),
  trace: c?.trace ? traceDetailView({ trace: c.trace, spans: c.spans }) : null,
});

export const claimView = (r: { item?: QueueItem; content?: ItemContent }) =>
  r.item ? { item: itemView(r.item), content: contentView(r.content) } : { item: null, content: null };

/** Scores as the REST body gives them (`{name: value}`), as the RPC's messages. */
export const scoresOf = (scores: Record<string, boolean | number | string>) =>
  Object.entries(scores).map(([name, v]) => ({
    name,
    value:
      typeof v === "boolean"
        ? { case: "boolean" as const, value: v }
        : typeof v === "number"
          ? { case: "number" as const, value: v }
          : { case: "category" as const, value: v },
  }));
