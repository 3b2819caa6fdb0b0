import { LIMITS } from "@kiln/kit/limits";
import type { Run, RunStep, ToolCall } from "@kiln/proto/execution";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { jsonTextOf } from "../json-limits.js";
import { Body, errorResponses, IdempotencyHeaders, Nullable, OneOf, ref, Timestamp } from "../schemas.js";
import { Id, IdParams, JsonObject, LabelName, ModelId, OrganizationId, organizationOf } from "./catalog-requests.js";
import { FreeJson, parseJson } from "./catalog-views.js";
import { iso } from "./views.js";

export const UsageView = Type.Object(
  { inputTokens: Type.Integer(), outputTokens: Type.Integer() },
  { $id: "Usage", description: "whitespace-separated words for local/echo" },
);
export const RunErrorView = Type.Object({ code: Type.String(), message: Type.String() }, { $id: "RunError" });
export const RunOutputView = Type.Object(
  {
    text: Type.String(),
    json: Type.Optional(FreeJson),
  },
  { $id: "RunOutput", description: "json is there when the response format is json_schema" },
);
export const OutputView = Nullable(ref(RunOutputView), { description: "null when the run failed" });

export const ToolCallView = Type.Object(
  {
    toolKey: Type.String(),
    toolVersionId: Type.String(),
    input: FreeJson,
    output: Type.Unknown({ description: "the tool's JSON output; null when the call failed" }),
    latencyMs: Type.Integer(),
    error: Type.Optional(ref(RunErrorView)),
  },
  { $id: "ToolCall" },
);

export const RunStatus = OneOf(["succeeded", "failed"]);

/** What every step of a multi-step run records of its execution (api.md "Runs"). */
export const STEP_EXECUTION_FIELDS = {
  provider: Nullable(Type.String()),
  model: Nullable(Type.String()),
  usage: ref(UsageView),
  estimatedCostUsd: Nullable(Type.Number()),
  latencyMs: Type.Integer(),
  toolCalls: Type.Array(ref(ToolCallView)),
  error: Type.Optional(ref(RunErrorView)),
};

export const SkillRunStepView = Type.Object(
  {
    stepId: Type.String({ description: "the composition alias" }),
    alias: Type.String(),
    type: OneOf(["prompt"]),
    status: RunStatus,
    input: FreeJson,
    output: OutputView,
    promptId: Type.String(),
    promptVersionId: Type.String(),
    ...STEP_EXECUTION_FIELDS,
    reused: Type.Boolean(),
  },
  { $id: "SkillRunStep" },
);

/** The fields every run kind shares (api.md "Runs"); each kind adds its own. */
export const RunCommonFields = {
  organizationId: Type.String(),
  status: RunStatus,
  input: FreeJson,
  output: OutputView,
  provider: Nullable(Type.String({ description: "null when the steps used different providers" })),
  model: Nullable(Type.String({ description: "null when the steps used different models" })),
  usage: ref(UsageView),
  estimatedCostUsd: Nullable(Type.Number({ description: "null when a model without a price took part" })),
  latencyMs: Type.Integer(),
  toolCallCount: Type.Integer(),
  toolCallCounts: Type.Record(Type.String(), Type.Integer(), { description: "calls per toolKey" }),
  toolCalls: Type.Array(ref(ToolCallView)),
  error: Type.Optional(ref(RunErrorView)),
  createdAt: Timestamp,
};

/** A stored prompt run (api.md "Runs"). */
export const PromptRunView = Type.Object(
  {
    id: Type.String(),
    kind: OneOf(["prompt"]),
    ...RunCommonFields,
    completedAt: Timestamp,
    promptId: Type.String(),
    promptVersionId: Type.String(),
  },
  { $id: "PromptRun" },
);

const skillRunFields = {
  kind: OneOf(["skill"]),
  ...RunCommonFields,
  completedAt: Timestamp,
  skillId: Type.String(),
  skillVersionId: Type.String(),
  steps: Type.Array(ref(SkillRunStepView)),
};

/** A stored skill run (api.md "Runs", "Skills"). */
export const SkillRunView = Type.Object({ id: Type.String(), ...skillRunFields }, { $id: "SkillRun" });

/** The stored run of an llm_judge call of an evaluation: `input` is `{system, user}` (docs/api.md "Evaluations"). */
export const JudgeRunView = Type.Object(
  { id: Type.String(), kind: OneOf(["judge"]), ...RunCommonFields, completedAt: Timestamp },
  { $id: "JudgeRun" },
);

/** A skill preview: the skill run shape, stored nowhere (api.md "Skills"). */
export const SkillPreviewView = Type.Object(
  { id: Type.Null({ description: "a preview is not stored" }), ...skillRunFields, preview: Type.Literal(true) },
  { $id: "SkillPreview" },
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
  type: "prompt" as const,
  status: s.status as "succeeded" | "failed",
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

/** The fields every run kind shares. */
function runFieldsView(r: Run) {
  return {
    organizationId: r.organizationId,
    status: r.status as "succeeded" | "failed",
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
  };
}

export function judgeRunView(r: Run | undefined) {
  if (!r) throw new Error("execution returned no run");
  return { id: r.id, kind: "judge" as const, ...runFieldsView(r), completedAt: iso(r.completedAt) ?? "" };
}

export function promptRunView(r: Run | undefined) {
  if (!r) throw new Error("execution returned no run");
  return {
    id: r.id,
    kind: "prompt" as const,
    ...runFieldsView(r),
    completedAt: iso(r.completedAt) ?? "",
    promptId: r.promptId,
    promptVersionId: r.promptVersionId,
  };
}

function skillRunFieldsView(r: Run) {
  return {
    kind: "skill" as const,
    ...runFieldsView(r),
    completedAt: iso(r.completedAt) ?? "",
    skillId: r.skillId,
    skillVersionId: r.skillVersionId,
    steps: r.steps.map(stepView),
  };
}

export function skillRunView(r: Run | undefined) {
  if (!r) throw new Error("execution returned no run");
  return { id: r.id, ...skillRunFieldsView(r) };
}

export function skillPreviewView(r: Run | undefined) {
  if (!r) throw new Error("execution returned no preview");
  return { id: null, ...skillRunFieldsView(r), preview: true as const };
}

/** A step of an agent run (api.md "Agents": `runId` names the child run; `reused` on a rerun). */
export const agentStepView = (s: RunStep) => ({
  stepId: s.stepId,
  type: s.type as "prompt" | "skill" | "tool",
  status: s.status as "succeeded" | "failed",
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
  if (!r) throw new Error("execution returned no run");
  return {
    id: r.id,
    kind: "agent" as const,
    ...runFieldsView(r),
    status: r.status as "succeeded" | "failed" | "running",
    completedAt: r.status === "running" ? null : (iso(r.completedAt) ?? ""),
    agentId: r.agentId,
    agentVersionId: r.agentVersionId,
    steps: r.steps.map(agentStepView),
    ...(r.parentRunId ? { parentRunId: r.parentRunId, rerunFromStepId: r.rerunFromStepId } : {}),
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
          variablesJson: jsonTextOf(variables),
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
          inputJson: jsonTextOf(request.body.input),
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
          inputJson: jsonTextOf(request.body.input),
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
