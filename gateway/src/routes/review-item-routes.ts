import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { answers } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { requestJsonText } from "../json-limits.js";
import { Body, errorResponses, IdParams, ref } from "../schemas.js";
import { Id, JsonValue } from "./catalog-requests.js";
import {
  ClaimView,
  claimView,
  contentView,
  itemView,
  reviewOp as op,
  QueueItemView,
  QueueItemWithContentView,
  reviewerOp,
  ScoreValue,
  scoresOf,
} from "./review-views.js";

const ItemParams = Type.Object({ id: Id, itemId: Id });
/** Reviewing is for members with their own token or session (docs/review.md "Who may do what"). */
const REVIEWER_ERRORS = [401, 403, 404, 409] as const;

/** The reviewer's routes of an annotation queue: claim, review, skip, release, make a case. */
export function registerReviewItemRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { review } = deps.clients;
  const ids = (p: { id: string; itemId: string }) => ({ queueId: p.id, itemId: p.itemId });

  app.post(
    "/api/annotation-queues/:id/next",
    reviewerOp(
      "claimNextAnnotationQueueItem",
      "Lease the next item to the caller (their own in review first), with its content",
      {
        params: IdParams,
        response: answers(ClaimView, 401, 403, 404),
      },
    ),
    async (request) => claimView(await review.claimNextItem({ queueId: request.params.id }, rpcOptions(request))),
  );

  app.get(
    "/api/annotation-queues/:id/items/:itemId",
    op("getAnnotationQueueItem", "An item with its content (the run, or the trace's root span and model calls)", {
      params: ItemParams,
      response: answers(QueueItemWithContentView, 401, 403, 404),
    }),
    async (request) => {
      const r = await review.getQueueItem(ids(request.params), rpcOptions(request));
      return { item: itemView(r.item), content: contentView(r.content) };
    },
  );

  app.post(
    "/api/annotation-queues/:id/items/:itemId/review",
    reviewerOp("reviewAnnotationQueueItem", "Score and comment the item the caller holds; completes it", {
      params: ItemParams,
      body: Body({
        scores: Type.Record(Type.String({ maxLength: 64 }), ScoreValue, { maxProperties: LIMITS.scoresPerQueue }),
        comment: Type.Optional(Type.String({ maxLength: LIMITS.reviewCommentChars })),
      }),
      response: answers(QueueItemView, 400, ...REVIEWER_ERRORS),
    }),
    async (request) => {
      const b = request.body;
      const r = await review.submitReview(
        { ...ids(request.params), scores: scoresOf(b.scores), comment: b.comment ?? "" },
        rpcOptions(request),
      );
      return itemView(r.item);
    },
  );

  for (const [action, summary] of [
    ["skip", "Skip the item the caller holds"],
    ["release", "Give back the item the caller holds: pending again"],
  ] as const) {
    app.post(
      `/api/annotation-queues/:id/items/:itemId/${action}`,
      reviewerOp(`${action}AnnotationQueueItem`, summary, {
        params: ItemParams,
        response: answers(QueueItemView, ...REVIEWER_ERRORS),
      }),
      async (request) => {
        const call = action === "skip" ? review.skipItem : review.releaseItem;
        return itemView((await call(ids(request.params), rpcOptions(request))).item);
      },
    );
  }

  app.post(
    "/api/annotation-queues/:id/items/:itemId/case",
    reviewerOp(
      "createCaseFromAnnotationQueueItem",
      "Add the item's run to a skill's evaluation cases: its input, and the corrected output as expected output",
      {
        params: ItemParams,
        body: Body({
          skillId: Id,
          expectedOutput: Type.Optional(
            JsonValue(
              "the corrected output: the case's expected output; left out or null: none",
              LIMITS.expectedOutputBytes,
            ),
          ),
        }),
        response: {
          201: Type.Object({ item: ref(QueueItemView), evaluationCaseId: Type.String() }),
          ...errorResponses(400, ...REVIEWER_ERRORS),
        },
      },
    ),
    async (request, reply) => {
      const b = request.body;
      const r = await review.createCaseFromItem(
        {
          ...ids(request.params),
          skillId: b.skillId,
          expectedOutput:
            b.expectedOutput === undefined || b.expectedOutput === null ? undefined : requestJsonText(b.expectedOutput),
        },
        rpcOptions(request),
      );
      return reply.code(201).send({ item: itemView(r.item), evaluationCaseId: r.evaluationCaseId });
    },
  );
}
