import { LIMITS } from "@kiln/kit/limits";
import type { FastifyRequest } from "fastify";
import Type, { type Static } from "typebox";
import {
  CacheRequestHeaders,
  CacheStatusResponseHeaders,
  cacheDirectiveOf,
  replyRunCacheStatus,
} from "../http/cache-header.js";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { answers, operation, operations } from "../http/operation.js";
import { rpcOptions, storelessRpcOptions } from "../http/request.js";
import { requestJsonText } from "../json-limits.js";
import { Body, errorResponses, IdempotencyHeaders, OneOf, ref } from "../schemas.js";
import { Id, IdParams, JsonObject, LabelName, ModelId, OrganizationId, organizationOf } from "./catalog-requests.js";
import { PromptDraftBody, promptContentOf } from "./prompt-content.js";
import { runById } from "./run-list-routes.js";
import { judgeRunView, promptRunView, skillPreviewView, skillRunView } from "./run-view-mappers.js";
import { JudgeRunView, PromptRunView, SkillPreviewView, SkillRunView } from "./run-views.js";

export const runErrors = errorResponses(400, 401, 403, 404, 409, 429, 502, 504);
const op = operations({ tags: ["runs"], stability: "beta" });

/** What a prompt run takes, streamed or not. */
export const PromptRunBody = Body({
  organizationId: OrganizationId,
  variables: JsonObject("values of the version's variables schema", LIMITS.variablesBytes),
  versionId: Type.Optional(Id),
  label: Type.Optional(LabelName),
  model: Type.Optional(ModelId),
  messages: Type.Optional(
    Type.Array(
      Type.Object(
        {
          role: OneOf(["system", "developer", "user", "assistant"]),
          content: Type.String({ maxLength: LIMITS.promptTextChars }),
        },
        { additionalProperties: false },
      ),
      {
        maxItems: LIMITS.promptMessages,
        description: 'the conversation: at the version\'s placeholder, else after its messages (api.md "Chat prompts")',
      },
    ),
  ),
  draft: Type.Optional(ref(PromptDraftBody)),
});

/** The RPC request of a prompt run: its body, and its Kiln-Cache header (docs/cache.md). */
export function promptRunRequest(request: FastifyRequest, promptId: string, body: Static<typeof PromptRunBody>) {
  const { organizationId, variables, versionId, label, model, messages, draft } = body;
  const cache = cacheDirectiveOf(request);
  return {
    organizationId,
    promptId,
    variables: requestJsonText(variables),
    versionId,
    label,
    model,
    ...(messages && { messages }),
    ...(draft && { draft: promptContentOf(draft) }),
    ...(cache && { cache }),
  };
}

const SkillRunBody = Body({
  organizationId: Type.Optional(OrganizationId),
  input: JsonObject("the skill input, matching its inputSchema", LIMITS.variablesBytes),
  versionId: Type.Optional(Id),
  label: Type.Optional(LabelName),
});

/** The RPC request of a skill run or preview. */
function skillRunRequest(request: FastifyRequest, skillId: string, body: Static<typeof SkillRunBody>) {
  return {
    organizationId: organizationOf(request, body.organizationId),
    skillId,
    input: requestJsonText(body.input),
    versionId: body.versionId,
    label: body.label,
  };
}

/** Prompt and skill runs, skill previews, skill run details (api.md "Runs", "Prompts", "Skills"). */
export function registerRunRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { execution } = deps.clients;

  app.post(
    "/api/prompts/:id/run",
    op("runPrompt", "Run a prompt's published version (or versionId) and store the run", {
      params: IdParams,
      headers: Type.Object({ ...IdempotencyHeaders.properties, ...CacheRequestHeaders }),
      body: PromptRunBody,
      response: { 201: { ...ref(PromptRunView), headers: CacheStatusResponseHeaders }, ...runErrors },
    }),
    async (request, reply) => {
      const r = await execution.runPrompt(
        promptRunRequest(request, request.params.id, request.body),
        rpcOptions(request),
      );
      replyRunCacheStatus(reply, r.run);
      return reply.code(201).send(promptRunView(r.run));
    },
  );

  app.post(
    "/api/skills/:id/run",
    op("runSkill", "Run a skill's published version (or versionId) and store the run", {
      params: IdParams,
      headers: IdempotencyHeaders,
      body: SkillRunBody,
      response: { 201: ref(SkillRunView), ...runErrors },
    }),
    async (request, reply) => {
      const r = await execution.runSkill(
        skillRunRequest(request, request.params.id, request.body),
        rpcOptions(request),
      );
      return reply.code(201).send(skillRunView(r.run));
    },
  );

  app.post(
    "/api/skills/:id/preview",
    op("previewSkill", "Run a skill's draft (else published) version without storing anything", {
      params: IdParams,
      body: SkillRunBody,
      response: { 200: ref(SkillPreviewView), ...runErrors },
    }),
    async (request) => {
      const r = await execution.previewSkill(
        skillRunRequest(request, request.params.id, request.body),
        storelessRpcOptions(request),
      );
      return skillPreviewView(r.run);
    },
  );

  app.get(
    "/api/skill-runs/:id",
    op("getSkillRun", "A stored skill run", { params: IdParams, response: answers(SkillRunView, 401, 403, 404) }),
    runById(execution, "skill", skillRunView),
  );

  app.get(
    "/api/judge-runs/:id",
    operation(
      { tags: ["runs", "evaluations"], stability: "beta" },
      "getJudgeRun",
      "The stored run of an llm_judge call, linked from an evaluation outcome's judgeRuns",
      { params: IdParams, response: answers(JudgeRunView, 401, 403, 404) },
    ),
    runById(execution, "judge", judgeRunView),
  );
}
