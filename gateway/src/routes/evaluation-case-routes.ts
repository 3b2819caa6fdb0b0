import { LIMITS } from "@kiln/kit/limits";
import type { FastifyRequest } from "fastify";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { principalOf, rpcOptions } from "../http/request.js";
import { Body, errorResponses, IdempotencyHeaders, List, ListQuery, ref } from "../schemas.js";
import { Id, IdParams, OrganizationId, organizationOf } from "./catalog-requests.js";
import { caseContentOf, evaluationCaseView } from "./evaluation-case-mappers.js";
import { EvaluationCaseView, NewCase } from "./evaluation-views.js";

/** Evaluation cases of a skill: list, create in batches, replace one (docs/api.md "Evaluations"). */

const tags = ["evaluations"];
const config = { stability: "beta" as const };

/**
 * The organization of a read addressed by the skill: the one given, else an API key's own, else
 * "" (the evaluation service takes the skill's).
 */
export function organizationOfRead(request: FastifyRequest, given: string | undefined): string {
  if (given) return given;
  const principal = principalOf(request);
  return principal.type === "api_key" ? principal.organizationId : "";
}

const OrganizationOfSkill = Type.Optional(
  Type.String({ minLength: 1, maxLength: 100, description: "default: the skill's organization" }),
);
const CasesQuerystring = Type.Object(
  { organizationId: OrganizationOfSkill, ...ListQuery },
  { additionalProperties: false },
);

export function registerEvaluationCaseRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { evaluation } = deps.clients;

  app.get(
    "/api/skills/:id/evaluation-cases",
    {
      config,
      schema: {
        tags,
        operationId: "listEvaluationCases",
        summary: "List a skill's evaluation cases, newest first",
        params: IdParams,
        querystring: CasesQuerystring,
        response: { 200: List(ref(EvaluationCaseView)), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const q = request.query;
      const r = await evaluation.listEvaluationCases(
        {
          organizationId: organizationOfRead(request, q.organizationId),
          skillId: request.params.id,
          limit: q.limit ? Number(q.limit) : 0,
          cursor: q.cursor ?? "",
        },
        rpcOptions(request),
      );
      return { data: r.cases.map(evaluationCaseView), nextCursor: r.nextCursor || null };
    },
  );

  app.post(
    "/api/skills/:id/evaluation-cases",
    {
      config,
      schema: {
        tags,
        operationId: "createEvaluationCases",
        summary: "Create a batch of evaluation cases for a skill",
        params: IdParams,
        headers: IdempotencyHeaders,
        body: Body({
          organizationId: Type.Optional(OrganizationId),
          cases: Type.Array(NewCase, { minItems: 1, maxItems: LIMITS.casesPerRequest }),
        }),
        response: { 201: List(ref(EvaluationCaseView)), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const r = await evaluation.createEvaluationCases(
        {
          organizationId: organizationOf(request, b.organizationId),
          skillId: request.params.id,
          cases: b.cases.map(caseContentOf),
        },
        rpcOptions(request),
      );
      return reply.code(201).send({ data: r.cases.map(evaluationCaseView), nextCursor: null });
    },
  );

  app.put(
    "/api/skills/:id/evaluation-cases/:caseId",
    {
      config,
      schema: {
        tags,
        operationId: "updateEvaluationCase",
        summary:
          "Replace an evaluation case's name, input, expected output and assertions (runs started after use them)",
        params: Type.Object({ id: Id, caseId: Id }),
        body: Body({ organizationId: Type.Optional(OrganizationId), ...NewCase.properties }),
        response: { 200: ref(EvaluationCaseView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { organizationId, ...c } = request.body;
      const r = await evaluation.updateEvaluationCase(
        {
          organizationId: organizationOf(request, organizationId),
          skillId: request.params.id,
          caseId: request.params.caseId,
          evaluationCase: caseContentOf(c),
        },
        rpcOptions(request),
      );
      if (!r.evaluationCase) throw new Error("evaluation returned no case");
      return evaluationCaseView(r.evaluationCase);
    },
  );

  app.delete(
    "/api/skills/:id/evaluation-cases/:caseId",
    {
      config,
      schema: {
        tags,
        operationId: "deleteEvaluationCase",
        summary: "Delete an evaluation case (reports of earlier runs keep its results); answers the deleted case",
        params: Type.Object({ id: Id, caseId: Id }),
        querystring: Type.Object({ organizationId: OrganizationOfSkill }, { additionalProperties: false }),
        response: { 200: ref(EvaluationCaseView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const r = await evaluation.deleteEvaluationCase(
        {
          organizationId: organizationOfRead(request, request.query.organizationId),
          skillId: request.params.id,
          caseId: request.params.caseId,
        },
        rpcOptions(request),
      );
      if (!r.evaluationCase) throw new Error("evaluation returned no case");
      return evaluationCaseView(r.evaluationCase);
    },
  );
}
