import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { requestJsonText } from "../json-limits.js";
import { Body, errorResponses, IdempotencyHeaders, ref } from "../schemas.js";
import { Id, IdParams, JsonObject, LabelName, ModelId, OrganizationId, organizationOf } from "./catalog-requests.js";
import { judgeRunView, promptRunView, skillPreviewView, skillRunView } from "./run-view-mappers.js";
import { JudgeRunView, PromptRunView, SkillPreviewView, SkillRunView } from "./run-views.js";

const runErrors = errorResponses(400, 401, 403, 404, 409, 429, 502, 504);

/** Prompt and skill runs, skill previews, skill run details (api.md "Runs", "Prompts", "Skills"). */
export function registerRunRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { execution } = deps.clients;

  app.post(
    "/api/prompts/:id/run",
    {
      config: { stability: "beta" },
      schema: {
        tags: ["runs"],
        operationId: "runPrompt",
        summary: "Run a prompt's published version (or versionId) and store the run",
        params: IdParams,
        headers: IdempotencyHeaders,
        body: Body({
          organizationId: OrganizationId,
          variables: JsonObject("values of the version's variables schema", LIMITS.variablesBytes),
          versionId: Type.Optional(Id),
          label: Type.Optional(LabelName),
          model: Type.Optional(ModelId),
        }),
        response: { 201: ref(PromptRunView), ...runErrors },
      },
    },
    async (request, reply) => {
      const { organizationId, variables, versionId, label, model } = request.body;
      const r = await execution.runPrompt(
        {
          organizationId,
          promptId: request.params.id,
          variables: requestJsonText(variables),
          versionId,
          label,
          model,
        },
        rpcOptions(request),
      );
      return reply.code(201).send(promptRunView(r.run));
    },
  );

  const skillRunBody = Body({
    organizationId: Type.Optional(OrganizationId),
    input: JsonObject("the skill input, matching its inputSchema", LIMITS.variablesBytes),
    versionId: Type.Optional(Id),
    label: Type.Optional(LabelName),
  });

  app.post(
    "/api/skills/:id/run",
    {
      config: { stability: "beta" },
      schema: {
        tags: ["runs"],
        operationId: "runSkill",
        summary: "Run a skill's published version (or versionId) and store the run",
        params: IdParams,
        headers: IdempotencyHeaders,
        body: skillRunBody,
        response: { 201: ref(SkillRunView), ...runErrors },
      },
    },
    async (request, reply) => {
      const r = await execution.runSkill(
        {
          organizationId: organizationOf(request, request.body.organizationId),
          skillId: request.params.id,
          input: requestJsonText(request.body.input),
          versionId: request.body.versionId,
          label: request.body.label,
        },
        rpcOptions(request),
      );
      return reply.code(201).send(skillRunView(r.run));
    },
  );

  app.post(
    "/api/skills/:id/preview",
    {
      config: { stability: "beta" },
      schema: {
        tags: ["runs"],
        operationId: "previewSkill",
        summary: "Run a skill's draft (else published) version without storing anything",
        params: IdParams,
        body: skillRunBody,
        response: { 200: ref(SkillPreviewView), ...runErrors },
      },
    },
    async (request) => {
      // A preview stores nothing, so it takes no Idempotency-Key.
      const options = rpcOptions(request);
      const r = await execution.previewSkill(
        {
          organizationId: organizationOf(request, request.body.organizationId),
          skillId: request.params.id,
          input: requestJsonText(request.body.input),
          versionId: request.body.versionId,
          label: request.body.label,
        },
        { ...options, headers: undefined },
      );
      return skillPreviewView(r.run);
    },
  );

  app.get(
    "/api/skill-runs/:id",
    {
      config: { stability: "beta" },
      schema: {
        tags: ["runs"],
        operationId: "getSkillRun",
        summary: "A stored skill run",
        params: IdParams,
        response: { 200: ref(SkillRunView), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const r = await execution.getRun({ id: request.params.id, kind: "skill" }, rpcOptions(request));
      return skillRunView(r.run);
    },
  );

  app.get(
    "/api/judge-runs/:id",
    {
      config: { stability: "beta" },
      schema: {
        tags: ["runs", "evaluations"],
        operationId: "getJudgeRun",
        summary: "The stored run of an llm_judge call, linked from an evaluation outcome's judgeRuns",
        params: IdParams,
        response: { 200: ref(JudgeRunView), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const r = await execution.getRun({ id: request.params.id, kind: "judge" }, rpcOptions(request));
      return judgeRunView(r.run);
    },
  );
}
