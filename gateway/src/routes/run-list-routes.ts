import type { Run } from "@kiln/proto/execution";
import Type from "typebox";
import type { GatewayApp, GatewayClients, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf, textFiltersOf, timeFilterOf } from "../http/list-page.js";
import { operations } from "../http/operation.js";
import { byId, rpcOptions } from "../http/request.js";
import { errorResponses, List, ListQuery, OneOf, ref } from "../schemas.js";
import { AgentRunView } from "./agent-run-views.js";
import { IdParams, ModelId, OrganizationId, organizationOf } from "./catalog-requests.js";
import { agentRunView, judgeRunView, modelRunView, promptRunView, skillRunView } from "./run-view-mappers.js";
import { JudgeRunView, ModelRunView, PromptRunView, SkillRunView } from "./run-views.js";

/** Any stored run, in the shape of its kind (api.md "Runs"). */
export const AnyRun = Type.Union([
  ref(PromptRunView),
  ref(SkillRunView),
  ref(AgentRunView),
  ref(JudgeRunView),
  ref(ModelRunView),
]);

export function anyRunView(r: Run | undefined) {
  if (!r) throw new Error("execution returned no run");
  if (r.kind === "skill") return skillRunView(r);
  if (r.kind === "agent") return agentRunView(r);
  if (r.kind === "judge") return judgeRunView(r);
  if (r.kind === "model") return modelRunView(r);
  return promptRunView(r);
}

/** The handler of a route answering a stored run of `kind` ("": any) by its id, through `view`. */
export function runById<V>(execution: GatewayClients["execution"], kind: string, view: (run: Run | undefined) => V) {
  return byId(
    (input, options) => execution.getRun({ ...input, kind }, options),
    (r) => view(r.run),
  );
}

/** The runs list and any run by id (non-public: the console's runs screen; docs/console.md). */
export function registerRunListRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { execution } = deps.clients;
  const op = operations({ tags: ["runs"], stability: "non-public" });

  app.get(
    "/api/runs",
    op("listRuns", "An organization's runs, newest first, filtered by kind, status, model and creation time", {
      querystring: Type.Object(
        {
          organizationId: Type.Optional(OrganizationId),
          kind: Type.Optional(OneOf(["prompt", "skill", "agent", "judge", "model"])),
          status: Type.Optional(OneOf(["succeeded", "failed", "running", "cancelled"])),
          model: Type.Optional(ModelId),
          createdAfter: Type.Optional(Type.String({ maxLength: 40, description: "ISO-8601, inclusive" })),
          createdBefore: Type.Optional(Type.String({ maxLength: 40, description: "ISO-8601, exclusive" })),
          ...ListQuery,
        },
        { additionalProperties: false },
      ),
      response: { 200: List(AnyRun), ...errorResponses(400, 401, 403, 404) },
    }),
    async (request) => {
      const q = request.query;
      const r = await execution.listRuns(
        {
          organizationId: organizationOf(request, q.organizationId),
          ...pageOf(q),
          ...textFiltersOf(q, "kind", "status", "model"),
          createdAfter: timeFilterOf("createdAfter", q.createdAfter),
          createdBefore: timeFilterOf("createdBefore", q.createdBefore),
        },
        rpcOptions(request),
      );
      return listPage(r.runs, anyRunView, r.nextCursor);
    },
  );

  app.get(
    "/api/runs/:id",
    op("getRun", "Any stored run (prompt, skill, agent, judge, model) with every step and tool call", {
      params: IdParams,
      response: { 200: AnyRun, ...errorResponses(401, 403, 404) },
    }),
    runById(execution, "", anyRunView),
  );
}
