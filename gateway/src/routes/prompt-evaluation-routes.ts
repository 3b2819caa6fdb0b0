import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf } from "../http/list-page.js";
import { answers, listAnswers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { MAX_JSON_BYTES } from "../json-limits.js";
import { Body, errorResponses, IdempotencyHeaders, ListQuery } from "../schemas.js";
import { Id, IdParams, OrganizationId, organizationOf } from "./catalog-requests.js";
import { Assertion, TargetLabel } from "./evaluation-assertion-views.js";
import { organizationOfRead } from "./evaluation-case-routes.js";
import { byRun, RunParams, subjectOf } from "./evaluation-run-requests.js";
import { evaluationStarted } from "./evaluation-view-mappers.js";
import { EvaluationStartedView } from "./evaluation-views.js";
import { assertionMessages } from "./online-views.js";
import {
  PromptEvaluationComparisonView,
  PromptEvaluationListItemView,
  PromptEvaluationView,
  promptEvaluationComparisonView,
  promptEvaluationListItemView,
  promptEvaluationView,
} from "./prompt-evaluation-views.js";

const op = operations({ tags: ["evaluations"], stability: "beta" });

const StartBody = Body({
  organizationId: Type.Optional(OrganizationId),
  datasetId: Type.String({ minLength: 1, maxLength: 100, description: "the dataset whose items are run" }),
  datasetVersion: Type.Optional(
    Type.Integer({ minimum: 1, description: "the dataset's version to run on; default: its current version" }),
  ),
  versionIds: Type.Optional(
    Type.Array(Id, {
      minItems: 1,
      maxItems: 5,
      uniqueItems: true,
      description: "the versions to run (not with labels); default: the published version, else the latest",
    }),
  ),
  labels: Type.Optional(
    Type.Array(TargetLabel, {
      minItems: 1,
      maxItems: 5,
      uniqueItems: true,
      description: "run the versions these labels point at (docs/labels.md); one the prompt does not have is 409",
    }),
  ),
  models: Type.Optional(
    Type.Array(Type.String({ minLength: 3, maxLength: 200 }), {
      minItems: 1,
      maxItems: 5,
      uniqueItems: true,
      description: "run each version on each of these models (side by side); default: each version's own model",
    }),
  ),
  assertions: Type.Array(Assertion, {
    minItems: 1,
    maxItems: 20,
    [MAX_JSON_BYTES]: LIMITS.assertionsBytes,
    description: "judge every item's output; an item's expectedOutput is the llm_judge's reference",
  }),
  repeats: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 20, description: "attempts per item and target (default 1)" }),
  ),
});

/** Prompt evaluations of a prompt (api.md "Prompt evaluations"). */
export function registerPromptEvaluationRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { evaluation } = deps.clients;

  app.post(
    "/api/prompts/:id/evaluations/run",
    op(
      "startPromptEvaluation",
      "Run a dataset's items on versions of the prompt (× models), each output judged by the assertions; poll the run",
      {
        params: IdParams,
        headers: IdempotencyHeaders,
        body: StartBody,
        response: {
          202: EvaluationStartedView,
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    ),
    async (request, reply) => {
      const b = request.body;
      const r = await evaluation.startPromptEvaluation(
        {
          organizationId: organizationOf(request, b.organizationId),
          promptId: request.params.id,
          datasetId: b.datasetId,
          datasetVersion: b.datasetVersion ?? 0,
          versionIds: b.versionIds ?? [],
          labels: b.labels ?? [],
          models: b.models ?? [],
          assertions: assertionMessages(b.assertions),
          repeats: b.repeats ?? 0,
        },
        rpcOptions(request),
      );
      return reply.code(202).send(evaluationStarted(r.run));
    },
  );

  app.get(
    "/api/prompts/:id/evaluations",
    op(
      "listPromptEvaluations",
      "List a prompt's evaluations, newest first, with their summaries (no per-item results)",
      {
        params: IdParams,
        querystring: Type.Object(ListQuery, { additionalProperties: false }),
        response: listAnswers(PromptEvaluationListItemView, 400, 401, 403, 404),
      },
    ),
    async (request) => {
      const r = await evaluation.listEvaluationRuns(
        {
          organizationId: organizationOfRead(request, undefined),
          ...subjectOf("prompt", request.params.id),
          ...pageOf(request.query),
        },
        rpcOptions(request),
      );
      return listPage(r.runs, promptEvaluationListItemView, r.nextCursor);
    },
  );

  app.get(
    "/api/prompts/:id/evaluations/compare",
    op(
      "comparePromptEvaluations",
      "Compare two completed evaluations of the prompt item by item on one target: verdicts, pass rates, the change",
      {
        params: IdParams,
        querystring: Type.Object(
          {
            base: Id,
            head: Id,
            target: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 250,
                description: "a target key both runs have; default: the first of base's that head has",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: answers(PromptEvaluationComparisonView, 400, 401, 403, 404, 409),
      },
    ),
    async (request) => {
      const q = request.query;
      const r = await evaluation.compareEvaluationRuns(
        {
          organizationId: organizationOfRead(request, undefined),
          ...subjectOf("prompt", request.params.id),
          baseEvaluationRunId: q.base,
          headEvaluationRunId: q.head,
          target: q.target ?? "",
        },
        rpcOptions(request),
      );
      return promptEvaluationComparisonView(r);
    },
  );

  app.post(
    "/api/prompts/:id/evaluations/:evaluationRunId/cancel",
    op(
      "cancelPromptEvaluation",
      "Cancel a prompt evaluation: pending attempts are not run; the report keeps what finished",
      { params: RunParams, response: answers(PromptEvaluationView, 401, 403, 404, 409) },
    ),
    byRun("prompt", promptEvaluationView, evaluation.cancelEvaluationRun),
  );

  app.get(
    "/api/prompts/:id/evaluations/:evaluationRunId",
    op(
      "getPromptEvaluation",
      "A prompt evaluation: each item's outcome by version (× model), linked to its run; pass rates, cost, latency",
      { params: RunParams, response: answers(PromptEvaluationView, 401, 403, 404) },
    ),
    byRun("prompt", promptEvaluationView, evaluation.getEvaluationRun),
  );
}
