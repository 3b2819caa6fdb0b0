/** The ReviewService RPCs (proto/kiln/evaluation/v1/review.proto) over the queue and item use cases. */
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { invalidArgument } from "@kiln/kit/errors";
import { answering, answeringOne, answeringPage, withInput, withPrincipal } from "@kiln/kit/principal";
import {
  type AutoAddRule,
  type CreateQueueRequest,
  ReviewService,
  type Score,
  type ScoreConfig,
  type SubmitReviewRequest,
  type UpdateQueueRequest,
} from "@kiln/proto/review";
import type { ItemContent } from "./item-content.js";
import type { Items, ItemWithContent } from "./items.js";
import type { Queues, QueueView } from "./queues.js";
import type { ItemDoc, QueueDoc, ScoreDoc } from "./review-store.js";
import type { ScoreConfigInput } from "./scores.js";

const ts = (d: Date | null | undefined) => (d ? timestampFromDate(d) : undefined);

export const queueToProto = (q: QueueDoc, view?: QueueView) => ({
  id: q._id,
  organizationId: q.organizationId,
  name: q.name,
  description: q.description,
  scoreConfigs: q.scoreConfigs.map((c) => ({ ...c, options: c.options ?? [] })),
  autoAdd: q.autoAdd ?? undefined,
  createdAt: ts(q.createdAt),
  createdBy: q.createdBy,
  updatedAt: ts(q.updatedAt),
  progress: view?.progress,
});

const scoreToProto = (s: ScoreDoc) => ({
  name: s.name,
  value:
    typeof s.value === "boolean"
      ? { case: "boolean" as const, value: s.value }
      : typeof s.value === "number"
        ? { case: "number" as const, value: s.value }
        : { case: "category" as const, value: s.value },
});

export const itemToProto = (i: ItemDoc) => ({
  id: i._id,
  queueId: i.queueId,
  organizationId: i.organizationId,
  targetType: i.targetType,
  targetId: i.targetId,
  status: i.status,
  addedBy: i.addedBy,
  addedAt: ts(i.addedAt),
  assignee: i.assignee,
  leaseUntil: i.status === "in_review" ? ts(i.leaseUntil) : undefined,
  review: i.review
    ? { ...i.review, scores: i.review.scores.map(scoreToProto), reviewedAt: ts(i.review.reviewedAt) }
    : undefined,
  evaluationCaseId: i.evaluationCaseId ?? "",
  evaluationCaseSkillId: i.evaluationCaseSkillId ?? "",
});

const contentToProto = (c: ItemContent | undefined) =>
  c && { run: c.run, trace: c.trace, spans: c.spans, messages: c.messages };
const withContent = (r: Partial<ItemWithContent>) => ({
  item: r.item && itemToProto(r.item),
  content: contentToProto(r.content),
});

const configsOf = (configs: ScoreConfig[]): ScoreConfigInput[] =>
  configs.map((c) => ({
    name: c.name,
    kind: c.kind,
    min: c.min,
    max: c.max,
    options: c.options,
    required: c.required,
  }));
const ruleOf = (r: AutoAddRule) => ({ kind: r.kind, id: r.id, label: r.label, sampleRate: r.sampleRate });

function scoresOf(scores: Score[]): ScoreDoc[] {
  return scores.map((s, i) => {
    if (s.value.case === undefined)
      throw invalidArgument("a score has no value", [{ field: `scores.${s.name || i}`, issue: "has no value" }]);
    return { name: s.name, value: s.value.value };
  });
}

const queueAnswer = answering((view: QueueView) => ({ queue: queueToProto(view.queue, view) }));
const itemAnswer = answeringOne("item", itemToProto);

export function registerReviewRpc(router: ConnectRouter, useCases: { queues: Queues; items: Items }): void {
  const { queues, items } = useCases;
  router.service(ReviewService, {
    createQueue: queueAnswer(
      withInput(
        (req: CreateQueueRequest) => ({
          organizationId: req.organizationId,
          name: req.name,
          description: req.description,
          scoreConfigs: configsOf(req.scoreConfigs),
          autoAdd: req.autoAdd && ruleOf(req.autoAdd),
        }),
        queues.createQueue,
      ),
    ),
    getQueue: queueAnswer(queues.getQueue),
    listQueues: answeringPage("queues", (q: QueueDoc) => queueToProto(q))(queues.listQueues),
    updateQueue: queueAnswer(
      withInput(
        (req: UpdateQueueRequest) => ({
          id: req.id,
          name: req.name,
          description: req.description,
          scoreConfigs: req.setScoreConfigs ? configsOf(req.scoreConfigs) : undefined,
          autoAdd: req.setAutoAdd ? (req.autoAdd ? ruleOf(req.autoAdd) : null) : undefined,
        }),
        queues.updateQueue,
      ),
    ),
    deleteQueue: queueAnswer(queues.deleteQueue),
    addQueueItems: withPrincipal(async (p, req) => {
      const r = await items.addItems(p, req);
      return { items: r.items.map(itemToProto), skipped: r.skipped };
    }),
    listQueueItems: answeringPage("items", itemToProto)(items.listItems),
    getQueueItem: answering(withContent)(items.getItem),
    claimNextItem: answering(withContent)(items.claimNext),
    submitReview: itemAnswer(
      withInput(
        (req: SubmitReviewRequest) => ({
          queueId: req.queueId,
          itemId: req.itemId,
          scores: scoresOf(req.scores),
          comment: req.comment,
        }),
        items.submitReview,
      ),
    ),
    skipItem: itemAnswer(items.skipItem),
    releaseItem: itemAnswer(items.releaseItem),
    createCaseFromItem: withPrincipal(async (p, req) => {
      const r = await items.createCase(p, {
        queueId: req.queueId,
        itemId: req.itemId,
        skillId: req.skillId,
        expectedOutputJson: req.expectedOutput?.json,
      });
      return { item: itemToProto(r.item), evaluationCaseId: r.caseId };
    }),
  });
}
