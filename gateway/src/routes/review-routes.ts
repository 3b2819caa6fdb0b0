import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf } from "../http/list-page.js";
import { answers, listAnswers } from "../http/operation.js";
import { byId, rpcOptions } from "../http/request.js";
import { Body, errorResponses, IdempotencyHeaders, IdParams, ListQuery, OneOf, ref } from "../schemas.js";
import { Description, Id, Name, OrganizationId, organizationOf } from "./catalog-requests.js";
import { registerReviewItemRoutes } from "./review-item-routes.js";
import {
  AnnotationQueueView,
  AutoAddRuleView,
  ITEM_STATUSES,
  itemView,
  QueueItemView,
  queueView,
  reviewOp,
  ScoreConfigView,
} from "./review-views.js";

const op = reviewOp;
const ScoreConfigs = Type.Array(ref(ScoreConfigView), { maxItems: LIMITS.scoresPerQueue });
const Ids = Type.Array(Id, { maxItems: LIMITS.itemsPerAdd });

type ConfigBody = { name: string; kind: string; min?: number; max?: number; options?: string[]; required?: boolean };
const configsOf = (configs: ConfigBody[]) =>
  configs.map((c) => ({ ...c, options: c.options ?? [], required: c.required ?? false }));
const ruleOf = (r: { kind: string; id: string; label?: string; sampleRate: number }) => ({
  ...r,
  label: r.label ?? "",
});

/** Human review (docs/review.md; issue #36): annotation queues and their items. */
export function registerReviewRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { review } = deps.clients;

  app.post(
    "/api/annotation-queues",
    op("createAnnotationQueue", "Create an annotation queue with its score set and an optional auto-add rule", {
      headers: IdempotencyHeaders,
      body: Body({
        organizationId: Type.Optional(OrganizationId),
        name: Name,
        description: Type.Optional(Description),
        scoreConfigs: Type.Optional(ScoreConfigs),
        autoAdd: Type.Optional(ref(AutoAddRuleView)),
      }),
      response: { 201: ref(AnnotationQueueView), ...errorResponses(400, 401, 403, 404) },
    }),
    async (request, reply) => {
      const b = request.body;
      const r = await review.createQueue(
        {
          organizationId: organizationOf(request, b.organizationId),
          name: b.name,
          description: b.description ?? "",
          scoreConfigs: configsOf(b.scoreConfigs ?? []),
          autoAdd: b.autoAdd && ruleOf(b.autoAdd),
        },
        rpcOptions(request),
      );
      return reply.code(201).send(queueView(r.queue));
    },
  );

  app.get(
    "/api/annotation-queues",
    op("listAnnotationQueues", "An organization's annotation queues, newest first", {
      querystring: Type.Object({ organizationId: Type.Optional(OrganizationId), ...ListQuery }),
      response: listAnswers(AnnotationQueueView, 400, 401, 403, 404),
    }),
    async (request) => {
      const q = request.query;
      const r = await review.listQueues(
        { organizationId: organizationOf(request, q.organizationId), ...pageOf(q) },
        rpcOptions(request),
      );
      return listPage(r.queues, queueView, r.nextCursor);
    },
  );

  app.get(
    "/api/annotation-queues/:id",
    op("getAnnotationQueue", "An annotation queue with its progress per status and per reviewer", {
      params: IdParams,
      response: answers(AnnotationQueueView, 401, 403, 404),
    }),
    byId(review.getQueue, (r) => queueView(r.queue)),
  );

  app.patch(
    "/api/annotation-queues/:id",
    op("updateAnnotationQueue", "Change a queue's name, description, score set or auto-add rule (null: none)", {
      params: IdParams,
      body: Body({
        name: Type.Optional(Name),
        description: Type.Optional(Description),
        scoreConfigs: Type.Optional(ScoreConfigs),
        autoAdd: Type.Optional(Type.Union([ref(AutoAddRuleView), Type.Null()])),
      }),
      response: answers(AnnotationQueueView, 400, 401, 403, 404),
    }),
    async (request) => {
      const b = request.body;
      const r = await review.updateQueue(
        {
          id: request.params.id,
          name: b.name,
          description: b.description,
          setScoreConfigs: b.scoreConfigs !== undefined,
          scoreConfigs: configsOf(b.scoreConfigs ?? []),
          setAutoAdd: b.autoAdd !== undefined,
          autoAdd: b.autoAdd ? ruleOf(b.autoAdd) : undefined,
        },
        rpcOptions(request),
      );
      return queueView(r.queue);
    },
  );

  app.delete(
    "/api/annotation-queues/:id",
    op("deleteAnnotationQueue", "Delete a queue and its items (evaluation cases made from them stay)", {
      params: IdParams,
      response: answers(AnnotationQueueView, 401, 403, 404),
    }),
    byId(review.deleteQueue, (r) => queueView(r.queue)),
  );

  app.post(
    "/api/annotation-queues/:id/items",
    op("addAnnotationQueueItems", "Add runs and traces of the organization; ones already in the queue are skipped", {
      headers: IdempotencyHeaders,
      params: IdParams,
      body: Body({ runIds: Type.Optional(Ids), traceIds: Type.Optional(Ids) }),
      response: {
        201: Type.Object({ data: Type.Array(ref(QueueItemView)), skipped: Type.Integer() }),
        ...errorResponses(400, 401, 403, 404),
      },
    }),
    async (request, reply) => {
      const b = request.body;
      const r = await review.addQueueItems(
        { queueId: request.params.id, runIds: b.runIds ?? [], traceIds: b.traceIds ?? [] },
        rpcOptions(request),
      );
      return reply.code(201).send({ data: r.items.map(itemView), skipped: r.skipped });
    },
  );

  app.get(
    "/api/annotation-queues/:id/items",
    op("listAnnotationQueueItems", "A queue's items, newest first, filtered by status", {
      params: IdParams,
      querystring: Type.Object({ status: Type.Optional(OneOf(ITEM_STATUSES)), ...ListQuery }),
      response: listAnswers(QueueItemView, 400, 401, 403, 404),
    }),
    async (request) => {
      const q = request.query;
      const r = await review.listQueueItems(
        { queueId: request.params.id, status: q.status ?? "", ...pageOf(q) },
        rpcOptions(request),
      );
      return listPage(r.items, itemView, r.nextCursor);
    },
  );

  registerReviewItemRoutes(app, deps);
}
