import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf } from "../http/list-page.js";
import { answers, listAnswers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { Body, errorResponses, IdempotencyHeaders, ListQuery } from "../schemas.js";
import { Id, IdParams, OrganizationId, organizationOf } from "./catalog-requests.js";
import { TargetLabel } from "./evaluation-assertion-views.js";
import { organizationOfRead, registerEvaluationCaseRoutes } from "./evaluation-case-routes.js";
import { byRun, RunParams } from "./evaluation-run-requests.js";
import {
  evaluationComparisonView,
  evaluationRunListItemView,
  evaluationRunView,
  evaluationStarted,
} from "./evaluation-view-mappers.js";
import {
  EvaluationComparisonView,
  EvaluationRunListItemView,
  EvaluationRunView,
  EvaluationStartedView,
} from "./evaluation-views.js";
import { registerPromptEvaluationRoutes } from "./prompt-evaluation-routes.js";

/**
 * Evaluation cases and evaluation runs of a skill (docs/api.md "Evaluations"; public beta).
 * The gateway checks shapes; the evaluation service owns the rules (which targets exist, which
 * cases belong to the skill, scoring) and the organization checks.
 */

const op = operations({ tags: ["evaluations"], stability: "beta" });

/** Evaluation cases and runs of a skill (api.md "Evaluations"), and a prompt's evaluations ("Prompt evaluations"). */
export function registerEvaluationRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { evaluation } = deps.clients;
  registerEvaluationCaseRoutes(app, deps);
  registerPromptEvaluationRoutes(app, deps);

  app.post(
    "/api/skills/:id/evaluations/run",
    op(
      "startEvaluationRun",
      "Start an evaluation run of the skill's cases (or caseIds, or a dataset's items) against its draft and/or published version; poll the run",
      {
        params: IdParams,
        headers: IdempotencyHeaders,
        body: Body({
          organizationId: Type.Optional(OrganizationId),
          targets: Type.Optional(
            Type.Array(TargetLabel, {
              minItems: 1,
              maxItems: 2,
              uniqueItems: true,
              description:
                "draft, published and/or labels of the skill (docs/labels.md); default: whichever of draft and published exist; naming one that does not is 409",
            }),
          ),
          caseIds: Type.Optional(
            Type.Array(Id, { minItems: 1, maxItems: 500, uniqueItems: true, description: "default: every case" }),
          ),
          repeats: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 20,
              description: "attempts per case and target (default 1): each case gets a pass rate and a verdict",
            }),
          ),
          datasetId: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 100,
              description:
                "run on this dataset's items instead of the skill's cases (docs/datasets.md); not with caseIds",
            }),
          ),
          datasetVersion: Type.Optional(
            Type.Integer({ minimum: 1, description: "the dataset's version to run on; default: its current version" }),
          ),
        }),
        response: {
          202: EvaluationStartedView,
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    ),
    async (request, reply) => {
      const b = request.body;
      const r = await evaluation.startEvaluationRun(
        {
          organizationId: organizationOf(request, b.organizationId),
          skillId: request.params.id,
          targets: b.targets ?? [],
          caseIds: b.caseIds ?? [],
          repeats: b.repeats ?? 0,
          datasetId: b.datasetId ?? "",
          datasetVersion: b.datasetVersion ?? 0,
        },
        rpcOptions(request),
      );
      return reply.code(202).send(evaluationStarted(r.run));
    },
  );

  app.get(
    "/api/skills/:id/evaluations",
    op(
      "listEvaluationRuns",
      "List a skill's evaluation runs, newest first, with their summaries (no per-case results)",
      {
        params: IdParams,
        querystring: Type.Object(ListQuery, { additionalProperties: false }),
        response: listAnswers(EvaluationRunListItemView, 400, 401, 403, 404),
      },
    ),
    async (request) => {
      const r = await evaluation.listEvaluationRuns(
        {
          organizationId: organizationOfRead(request, undefined),
          skillId: request.params.id,
          ...pageOf(request.query),
        },
        rpcOptions(request),
      );
      return listPage(r.runs, evaluationRunListItemView, r.nextCursor);
    },
  );

  app.get(
    "/api/skills/:id/evaluations/compare",
    op(
      "compareEvaluationRuns",
      "Compare two completed evaluation runs of the skill case by case: base and head verdicts and pass rates, the change, the summary",
      {
        params: IdParams,
        querystring: Type.Object(
          {
            base: Id,
            head: Id,
            target: Type.Optional(
              Type.String({
                pattern: "^[a-z][a-z0-9-]{0,39}$",
                description: "default: the first target of base that head has too (draft first)",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: answers(EvaluationComparisonView, 400, 401, 403, 404, 409),
      },
    ),
    async (request) => {
      const q = request.query;
      const r = await evaluation.compareEvaluationRuns(
        {
          organizationId: organizationOfRead(request, undefined),
          skillId: request.params.id,
          baseEvaluationRunId: q.base,
          headEvaluationRunId: q.head,
          target: q.target ?? "",
        },
        rpcOptions(request),
      );
      return evaluationComparisonView(r);
    },
  );

  app.post(
    "/api/skills/:id/evaluations/:evaluationRunId/cancel",
    op(
      "cancelEvaluationRun",
      "Cancel an evaluation run: pending attempts are not run; the report keeps what finished and says it was cancelled",
      { params: RunParams, response: answers(EvaluationRunView, 401, 403, 404, 409) },
    ),
    byRun("skill", evaluationRunView, evaluation.cancelEvaluationRun),
  );

  app.get(
    "/api/skills/:id/evaluations/:evaluationRunId",
    op("getEvaluationRun", "An evaluation run: per-case outcomes by target, changes, summary and contract validity", {
      params: RunParams,
      response: answers(EvaluationRunView, 401, 403, 404),
    }),
    byRun("skill", evaluationRunView, evaluation.getEvaluationRun),
  );
}
