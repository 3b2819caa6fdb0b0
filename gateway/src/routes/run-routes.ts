import type { Run, RunStep, ToolCall } from "@kiln/proto/execution";
import Type from "typebox";
import { type GatewayApp, type GatewayDeps, rpcOptions } from "../app.js";
import { Body, errorResponses, Nullable, Timestamp } from "../schemas.js";
import { Id, IdParams, JsonObject, ModelId, OrganizationId, organizationOf } from "./catalog-requests.js";
import { FreeJson, parseJson } from "./catalog-views.js";
import { iso } from "./views.js";

export const UsageView = Type.Object({ inputTokens: Type.Integer(), outputTokens: Type.Integer() });
export const RunErrorView = Type.Object({ code: Type.String(), message: Type.String() });
export const OutputView = Nullable(
  Type.Object({ text: Type.String(), json: Type.Optional(FreeJson) }, { description: "null when the run failed" }),
);

export const ToolCallView = Type.Object({
  toolKey: Type.String(),
  toolVersionId: Type.String(),
  input: FreeJson,
  output: FreeJson,
  latencyMs: Type.Integer(),
  error: Type.Optional(RunErrorView),
});

const StepView = Type.Object({
  stepId: Type.String(),
  alias: Type.String(),
  type: Type.String({ description: "prompt, skill or tool" }),
  status: Type.String({ description: "succeeded or failed" }),
  input: FreeJson,
  output: OutputView,
  promptId: Type.String(),
  promptVersionId: Type.String(),
  provider: Nullable(Type.String()),
  model: Nullable(Type.String()),
  usage: UsageView,
  estimatedCostUsd: Nullable(Type.Number()),
  latencyMs: Type.Integer(),
  toolCalls: Type.Array(ToolCallView),
  error: Type.Optional(RunErrorView),
  reused: Type.Boolean(),
});

/** The fields every run kind shares (api.md "Runs"); each kind adds its own. */
export const RunCommonFields = {
  kind: Type.String({ description: "prompt, skill or agent" }),
  organizationId: Type.String(),
  status: Type.String({ description: "succeeded or failed; running for an asynchronous agent run not finished yet" }),
  input: FreeJson,
  output: OutputView,
  provider: Nullable(Type.String()),
  model: Nullable(Type.String()),
  usage: UsageView,
  estimatedCostUsd: Nullable(Type.Number({ description: "null when a model without a price took part" })),
  latencyMs: Type.Integer(),
  toolCallCount: Type.Integer(),
  toolCallCounts: Type.Record(Type.String(), Type.Integer()),
  toolCalls: Type.Array(ToolCallView),
  error: Type.Optional(RunErrorView),
  createdAt: Timestamp,
};

/** The shared run shape of api.md "Runs". */
export const RunView = Type.Object(
  {
    id: Nullable(Type.String({ description: "null for a preview, which is not stored" })),
    ...RunCommonFields,
    completedAt: Timestamp,
    promptId: Type.Optional(Type.String()),
    promptVersionId: Type.Optional(Type.String()),
    skillId: Type.Optional(Type.String()),
    skillVersionId: Type.Optional(Type.String()),
    steps: Type.Optional(Type.Array(StepView)),
    preview: Type.Optional(Type.Boolean()),
  },
  { $id: "Run" },
);

export const toolCallView = (c: ToolCall) => ({
  toolKey: c.toolKey,
  toolVersionId: c.toolVersionId,
  input: parseJson(c.inputJson),
  output: c.outputJson === undefined ? null : parseJson(c.outputJson),
  latencyMs: Number(c.latencyMs),
  ...(c.error?.code ? { error: { code: c.error.code, message: c.error.message } } : {}),
});

export const usageView = (u: Run["usage"]) => ({
  inputTokens: Number(u?.inputTokens ?? 0n),
  outputTokens: Number(u?.outputTokens ?? 0n),
});

const stepView = (s: RunStep) => ({
  stepId: s.stepId,
  alias: s.stepId,
  type: s.type,
  status: s.status,
  input: parseJson(s.inputJson),
  output: s.outputJson === undefined ? null : (parseJson(s.outputJson) as { text: string; json?: unknown }),
  promptId: s.promptId,
  promptVersionId: s.promptVersionId,
  provider: s.provider ?? null,
  model: s.model ?? null,
  usage: usageView(s.usage),
  estimatedCostUsd: s.estimatedCostUsd ?? null,
  latencyMs: Number(s.latencyMs),
  toolCalls: s.toolCalls.map(toolCallView),
  ...(s.error?.code ? { error: { code: s.error.code, message: s.error.message } } : {}),
  reused: s.reused,
});

/**
 * Calls per toolKey, in the order the tools were first called. protobuf-es drops a map entry keyed
 * "__proto__" (a valid toolKey) on its way through the RPC, so a key the map lost is counted again
 * from the run's tool calls; Object.fromEntries keeps it an own property.
 */
function toolCallCountsView(r: Run): Record<string, number> {
  const fromMap = new Map(Object.entries(r.toolCallCounts).map(([k, v]): [string, number] => [k, Number(v)]));
  const tally = new Map<string, number>();
  for (const c of r.toolCalls) tally.set(c.toolKey, (tally.get(c.toolKey) ?? 0) + 1);
  const counts = new Map<string, number>();
  for (const [key, n] of tally) counts.set(key, fromMap.get(key) ?? n);
  for (const [key, n] of fromMap) if (!counts.has(key)) counts.set(key, n);
  return Object.fromEntries(counts);
}

export function runView(r: Run | undefined) {
  if (!r) throw new Error("execution returned no run");
  return {
    id: r.id || null,
    kind: r.kind,
    organizationId: r.organizationId,
    status: r.status,
    input: parseJson(r.inputJson),
    output: r.outputJson === undefined ? null : (parseJson(r.outputJson) as { text: string; json?: unknown }),
    provider: r.provider ?? null,
    model: r.model ?? null,
    usage: usageView(r.usage),
    estimatedCostUsd: r.estimatedCostUsd ?? null,
    latencyMs: Number(r.latencyMs),
    toolCallCount: Number(r.toolCallCount),
    toolCallCounts: toolCallCountsView(r),
    toolCalls: r.toolCalls.map(toolCallView),
    ...(r.error?.code ? { error: { code: r.error.code, message: r.error.message } } : {}),
    createdAt: iso(r.createdAt) ?? "",
    completedAt: iso(r.completedAt) ?? "",
    ...(r.kind === "prompt" ? { promptId: r.promptId, promptVersionId: r.promptVersionId } : {}),
    ...(r.kind === "skill"
      ? { skillId: r.skillId, skillVersionId: r.skillVersionId, steps: r.steps.map(stepView) }
      : {}),
    ...(r.preview ? { preview: true } : {}),
  };
}

/** A step of an agent run (api.md "Agents": `runId` names the child run; `reused` on a rerun). */
export const agentStepView = (s: RunStep) => ({
  stepId: s.stepId,
  type: s.type,
  status: s.status,
  input: parseJson(s.inputJson),
  output: s.outputJson === undefined ? null : (parseJson(s.outputJson) as { text: string; json?: unknown }),
  ...(s.runId ? { runId: s.runId } : {}),
  provider: s.provider ?? null,
  model: s.model ?? null,
  usage: usageView(s.usage),
  estimatedCostUsd: s.estimatedCostUsd ?? null,
  latencyMs: Number(s.latencyMs),
  toolCalls: s.toolCalls.map(toolCallView),
  ...(s.error?.code ? { error: { code: s.error.code, message: s.error.message } } : {}),
  reused: s.reused,
});

/**
 * An agent run: the shared run shape plus `agentId, agentVersionId, steps, parentRunId?,
 * rerunFromStepId?` (api.md "Runs"); `completedAt` is null while an asynchronous run is running.
 */
export function agentRunView(r: Run | undefined) {
  const { promptId: _p, promptVersionId: _pv, skillId: _s, skillVersionId: _sv, preview: _x, ...shared } = runView(r);
  const run = r as Run;
  return {
    ...shared,
    id: run.id,
    completedAt: run.status === "running" ? null : shared.completedAt,
    agentId: run.agentId,
    agentVersionId: run.agentVersionId,
    steps: run.steps.map(agentStepView),
    ...(run.parentRunId ? { parentRunId: run.parentRunId, rerunFromStepId: run.rerunFromStepId } : {}),
  };
}

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
        summary: "Run a prompt's published version (or versionId) and store the run",
        params: IdParams,
        body: Body({
          organizationId: OrganizationId,
          variables: JsonObject("values of the version's variables schema"),
          versionId: Type.Optional(Id),
          model: Type.Optional(ModelId),
        }),
        response: { 201: RunView, ...runErrors },
      },
    },
    async (request, reply) => {
      const { organizationId, variables, versionId, model } = request.body;
      const r = await execution.runPrompt(
        { organizationId, promptId: request.params.id, variablesJson: JSON.stringify(variables), versionId, model },
        rpcOptions(request),
      );
      return reply.code(201).send(runView(r.run));
    },
  );

  const skillRunBody = Body({
    organizationId: Type.Optional(OrganizationId),
    input: JsonObject("the skill input, matching its inputSchema"),
    versionId: Type.Optional(Id),
  });

  app.post(
    "/api/skills/:id/run",
    {
      config: { stability: "beta" },
      schema: {
        tags: ["runs"],
        summary: "Run a skill's published version (or versionId) and store the run",
        params: IdParams,
        body: skillRunBody,
        response: { 201: RunView, ...runErrors },
      },
    },
    async (request, reply) => {
      const r = await execution.runSkill(
        {
          organizationId: organizationOf(request, request.body.organizationId),
          skillId: request.params.id,
          inputJson: JSON.stringify(request.body.input),
          versionId: request.body.versionId,
        },
        rpcOptions(request),
      );
      return reply.code(201).send(runView(r.run));
    },
  );

  app.post(
    "/api/skills/:id/preview",
    {
      config: { stability: "beta" },
      schema: {
        tags: ["runs"],
        summary: "Run a skill's draft (else published) version without storing anything",
        params: IdParams,
        body: skillRunBody,
        response: { 200: RunView, ...runErrors },
      },
    },
    async (request) => {
      // A preview stores nothing, so it takes no Idempotency-Key.
      const options = rpcOptions(request);
      const r = await execution.previewSkill(
        {
          organizationId: organizationOf(request, request.body.organizationId),
          skillId: request.params.id,
          inputJson: JSON.stringify(request.body.input),
          versionId: request.body.versionId,
        },
        { ...options, headers: undefined },
      );
      return runView(r.run);
    },
  );

  app.get(
    "/api/skill-runs/:id",
    {
      config: { stability: "beta" },
      schema: {
        tags: ["runs"],
        summary: "A stored skill run",
        params: IdParams,
        response: { 200: RunView, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const r = await execution.getRun({ id: request.params.id, kind: "skill" }, rpcOptions(request));
      return runView(r.run);
    },
  );
}
