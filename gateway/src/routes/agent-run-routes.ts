import { LIMITS } from "@kiln/kit/limits";
import Type, { type Static } from "typebox";
import { HttpError } from "../errors.js";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { answers, operation, operations } from "../http/operation.js";
import { rpcOptions, storelessRpcOptions } from "../http/request.js";
import { requestJsonText } from "../json-limits.js";
import { Body, errorResponses, IdempotencyHeaders, ref } from "../schemas.js";
import { AgentRunComparisonView, AgentRunView, type InputIssueView, LoadedInputsView } from "./agent-run-views.js";
import { Id, IdParams, JsonObject, LabelName, OrganizationId, organizationOf } from "./catalog-requests.js";
import { parseJson } from "./catalog-views.js";
import { runById } from "./run-list-routes.js";
import { agentRunComparisonView, agentRunView } from "./run-view-mappers.js";

const MAX_COMPARED = 10;

const runErrors = errorResponses(400, 401, 403, 404, 409, 429, 502, 504);
const stable = operations({ tags: ["agent runtime"], stability: "stable" });

/** The agent runtime (api.md "Agents", docs/api.md "Stability": stable) and run comparison (beta). */
export function registerAgentRunRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { execution } = deps.clients;

  app.post(
    "/api/agents/:id/run",
    stable("runAgent", "Run an agent's published version (or versionId); mode async answers 202 with a running run", {
      params: IdParams,
      headers: IdempotencyHeaders,
      body: Body({
        organizationId: Type.Optional(OrganizationId),
        inputs: JsonObject("the agent inputs, matching the version's inputSchema", LIMITS.variablesBytes),
        versionId: Type.Optional(Id),
        label: Type.Optional(LabelName),
        mode: Type.Optional(Type.Union([Type.Literal("sync"), Type.Literal("async")])),
      }),
      response: { 201: ref(AgentRunView), 202: ref(AgentRunView), ...runErrors },
    }),
    async (request, reply) => {
      const async = request.body.mode === "async";
      const r = await execution.runAgent(
        {
          organizationId: organizationOf(request, request.body.organizationId),
          agentId: request.params.id,
          inputs: requestJsonText(request.body.inputs),
          versionId: request.body.versionId,
          label: request.body.label,
          async,
        },
        rpcOptions(request),
      );
      return reply.code(async ? 202 : 201).send(agentRunView(r.run));
    },
  );

  // Routed before /api/agent-runs/:id (api.md).
  app.get(
    "/api/agent-runs/compare",
    operation(
      { tags: ["agent runtime"], stability: "beta" },
      "compareAgentRuns",
      "Compare 2 to 10 agent runs of one organization step by step",
      {
        querystring: Type.Object(
          { runIds: Type.String({ minLength: 1, maxLength: 2_000, description: "comma-separated run ids" }) },
          { additionalProperties: false },
        ),
        response: answers(AgentRunComparisonView, 400, 401, 403, 404),
      },
    ),
    async (request) => {
      const runIds = request.query.runIds
        .split(",")
        .map((id) => id.trim())
        .filter((id) => id !== "");
      if (runIds.length < 2 || runIds.length > MAX_COMPARED) {
        throw new HttpError("invalid_argument", `compare 2 to ${MAX_COMPARED} runs`, [
          { field: "runIds", issue: `must list 2 to ${MAX_COMPARED} run ids` },
        ]);
      }
      const r = await execution.compareAgentRuns({ runIds }, rpcOptions(request));
      return agentRunComparisonView(r);
    },
  );

  app.get(
    "/api/agent-runs/:id",
    stable("getAgentRun", "A stored agent run (poll an asynchronous run until its status is not running)", {
      params: IdParams,
      response: answers(AgentRunView, 401, 403, 404),
    }),
    runById(execution, "agent", agentRunView),
  );

  app.post(
    "/api/agent-runs/:id/rerun-from-step",
    stable(
      "rerunAgentFromStep",
      "A new run of the same agent version that reuses the outputs of the steps before stepId",
      {
        params: IdParams,
        headers: IdempotencyHeaders,
        body: Body({
          stepId: Type.String({ minLength: 1, maxLength: 200 }),
          inputs: Type.Optional(JsonObject("new inputs, in effect from stepId on", LIMITS.variablesBytes)),
        }),
        response: { 201: ref(AgentRunView), ...runErrors },
      },
    ),
    async (request, reply) => {
      const r = await execution.rerunAgentFromStep(
        {
          runId: request.params.id,
          stepId: request.body.stepId,
          inputs: request.body.inputs === undefined ? undefined : requestJsonText(request.body.inputs),
        },
        rpcOptions(request),
      );
      return reply.code(201).send(agentRunView(r.run));
    },
  );

  app.post(
    "/api/agent-runs/:id/load-inputs",
    stable("loadAgentRunInputs", "A run's inputs checked against an agent version (default: the published one)", {
      params: IdParams,
      body: Body({ versionId: Type.Optional(Id) }),
      response: answers(LoadedInputsView, 400, 401, 403, 404, 409),
    }),
    async (request) => {
      const r = await execution.loadAgentInputs(
        { runId: request.params.id, versionId: request.body.versionId },
        storelessRpcOptions(request),
      );
      return {
        agentId: r.agentId,
        agentVersionId: r.agentVersionId,
        inputs: parseJson(r.inputs?.json),
        validation: {
          valid: r.valid,
          errors: r.errors.map((e) => ({
            path: e.path,
            code: e.code as Static<typeof InputIssueView>["code"],
            message: e.message,
          })),
        },
      };
    },
  );
}
