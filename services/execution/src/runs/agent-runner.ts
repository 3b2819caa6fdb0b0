/**
 * The agent runtime (api.md "Agents", the stable part): run an agent version's workflow (sync, or
 * async with a "running" record that is polled), rerun from a step reusing earlier outputs, load a
 * run's inputs against another version, and compare runs. Every step that calls a model stores a
 * child run (prompt or skill) with its own run.completed; the agent run sums them.
 */
import { isDeepStrictEqual } from "node:util";
import { type Client, createContextValues } from "@connectrpc/connect";
import { authorizeOnResource, type IdentityAuth } from "@kiln/kit/authorizer";
import { type FieldIssue, failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import type { Logger } from "@kiln/kit/logger";
import { kPrincipal, kRequestId } from "@kiln/kit/principal";
import { remote } from "@kiln/kit/rpc/errors";
import type { Collection } from "@kiln/kit/store";
import type { CatalogService, ResolveAgentVersionResponse } from "@kiln/proto/catalog";
import type { RunEventIntentDoc, RunEventOutbox } from "../events/run-events.js";
import type { ProviderRegistry } from "../providers/provider-registry.js";
import type { RunDoc } from "../store/run-store.js";
import type { InputValidator } from "../tools/input-validator.js";
import type { ExecutableTool, ToolExecutor } from "../tools/tool-executor.js";
import type { StepOutput } from "./bindings.js";
import { executePrompt, type RunnablePrompt, type ToolCallRecord } from "./prompt-execution.js";
import {
  type CallContext,
  executeSkillSteps,
  insertRun,
  resolveModelFor,
  runDocOf,
  runnableOf,
  storeRun,
  toolOf,
} from "./runner.js";
import {
  type AgentStepRecord,
  executeWorkflow,
  parseWorkflow,
  type StepResult,
  type Workflow,
  type WorkflowResult,
  type WorkflowStep,
} from "./workflow-engine.js";

export interface AgentRunnerDeps {
  runs: Collection<RunDoc>;
  outbox: RunEventOutbox;
  catalog: Client<typeof CatalogService>;
  identityAuth: IdentityAuth;
  models: ProviderRegistry;
  tools: ToolExecutor;
  validator: InputValidator;
  maxToolRounds: number;
  logger: Logger;
  now?: () => Date;
}

/** An input problem of load-inputs (api.md: `validation.errors`). */
export interface InputIssue {
  path: string;
  code: string;
  message: string;
}

export interface AgentRunComparison {
  runs: { id: string; agentId: string; agentVersionId: string; status: string; createdAt: string }[];
  steps: {
    stepId: string;
    byRun: Record<
      string,
      { status: string; output: StepOutput | null; usage: AgentStepRecord["usage"]; latencyMs: number } | null
    >;
    outputsEqual: boolean;
  }[];
  totals: Record<string, { usage: RunDoc["usage"]; estimatedCostUsd: number | null; latencyMs: number }>;
}

interface SkillStep {
  skillId: string;
  skillVersionId: string;
  inputSchema: unknown;
  steps: { alias: string; variables: Record<string, unknown>; prompt: RunnablePrompt }[];
}

/** An agent version ready to run: its workflow and what each step runs. */
interface RunnableAgent {
  agentId: string;
  agentVersionId: string;
  organizationId: string;
  workflow: Workflow;
  prompts: Map<string, RunnablePrompt>;
  skills: Map<string, SkillStep>;
  tools: Map<string, ExecutableTool>;
}

const MIN_COMPARED = 2;
const MAX_COMPARED = 10;

const parse = (text: string | undefined, fallback: unknown): unknown => (text ? JSON.parse(text) : fallback);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function parseInputs(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = text ? JSON.parse(text) : {};
  } catch {
    throw invalidArgument("inputs is not valid JSON", [{ field: "inputs", issue: "must be a JSON object" }]);
  }
  if (!isObject(value))
    throw invalidArgument("inputs must be an object", [{ field: "inputs", issue: "must be an object" }]);
  return value;
}

/** input-validator names fields from "input"; agent inputs live under "inputs". */
const asInputs = (issues: FieldIssue[]): FieldIssue[] =>
  issues.map((i) => ({ field: i.field.replace(/^input/, "inputs"), issue: i.issue }));

const issueCode = (issue: string) =>
  issue === "is required" ? "required" : issue === "is not allowed" ? "not_allowed" : "invalid_value";

const ZERO_USAGE = { inputTokens: 0, outputTokens: 0 };

/** A stored step record as JSON (runToProto and the gateway read these field names). */
function stepJsonOf(r: AgentStepRecord) {
  return {
    stepId: r.stepId,
    type: r.type,
    status: r.status,
    input: r.input,
    output: r.output,
    ...(r.runId ? { runId: r.runId } : {}),
    ...(r.promptId ? { promptId: r.promptId, promptVersionId: r.promptVersionId } : {}),
    provider: r.provider,
    model: r.model,
    usage: r.usage,
    estimatedCostUsd: r.estimatedCostUsd,
    latencyMs: r.latencyMs,
    toolCalls: r.toolCalls,
    error: r.error ?? null,
    reused: r.reused,
  };
}

function stepRecordsOf(run: RunDoc): AgentStepRecord[] {
  return (JSON.parse(run.stepsJson) as (AgentStepRecord & { error: AgentStepRecord["error"] | null })[]).map((s) => {
    const { error, ...rest } = s;
    return { ...rest, ...(error ? { error } : {}) };
  });
}

interface AgentRunDocInput {
  id: string;
  organizationId: string;
  inputs: Record<string, unknown>;
  agentId: string;
  agentVersionId: string;
  createdAt: Date;
  completedAt: Date;
  result: WorkflowResult;
  parentRunId?: string;
  rerunFromStepId?: string;
}

/**
 * The agent run record (api.md "Runs"): usage, cost and tool calls summed over the steps (a tool
 * step is one call; reused steps cost nothing); provider and model only when every step agrees.
 */
export function agentRunDocOf(r: AgentRunDocInput): RunDoc {
  const steps = r.result.steps;
  const usage = { inputTokens: 0, outputTokens: 0 };
  let cost: number | null = 0;
  for (const s of steps) {
    usage.inputTokens += s.usage.inputTokens;
    usage.outputTokens += s.usage.outputTokens;
    cost = cost === null || s.estimatedCostUsd === null ? null : cost + s.estimatedCostUsd;
  }
  const toolCalls = steps.flatMap((s) => s.toolCalls);
  const counts = new Map<string, number>();
  for (const c of toolCalls) counts.set(c.toolKey, (counts.get(c.toolKey) ?? 0) + 1);
  const agree = (key: "provider" | "model") =>
    steps.length > 0 && steps.every((s) => s[key] === steps[0]?.[key]) ? (steps[0]?.[key] ?? null) : null;
  const succeeded = r.result.error === null && r.result.output !== null;
  return {
    _id: r.id,
    kind: "agent",
    organizationId: r.organizationId,
    status: succeeded ? "succeeded" : "failed",
    inputJson: JSON.stringify({ inputs: r.inputs }),
    outputJson: succeeded ? JSON.stringify(r.result.output) : null,
    provider: agree("provider"),
    model: agree("model"),
    usage,
    estimatedCostUsd: cost,
    latencyMs: Math.max(0, r.completedAt.getTime() - r.createdAt.getTime()),
    toolCallCount: toolCalls.length,
    toolCallCounts: [...counts].map(([toolKey, count]) => ({ toolKey, count })),
    toolCallsJson: JSON.stringify(toolCalls),
    stepsJson: JSON.stringify(steps.map(stepJsonOf)),
    error: succeeded ? null : (r.result.error ?? { code: "no_output", message: "the run produced no output" }),
    promptId: "",
    promptVersionId: "",
    skillId: "",
    skillVersionId: "",
    agentId: r.agentId,
    agentVersionId: r.agentVersionId,
    ...(r.parentRunId ? { parentRunId: r.parentRunId, rerunFromStepId: r.rerunFromStepId ?? "" } : {}),
    createdAt: r.createdAt,
    completedAt: r.completedAt,
  };
}

/** The summary of a child run as one agent step's result. */
function stepResultOfRun(run: RunDoc, extra: Partial<StepResult> = {}): StepResult {
  return {
    status: run.status === "succeeded" ? "succeeded" : "failed",
    output: run.outputJson ? (JSON.parse(run.outputJson) as StepOutput) : null,
    runId: run._id,
    provider: run.provider,
    model: run.model,
    usage: run.usage,
    estimatedCostUsd: run.estimatedCostUsd,
    latencyMs: run.latencyMs,
    toolCalls: JSON.parse(run.toolCallsJson) as ToolCallRecord[],
    ...(run.error ? { error: run.error } : {}),
    ...extra,
  };
}

const failedStep = (error: { code: string; message: string }): StepResult => ({
  status: "failed",
  output: null,
  provider: null,
  model: null,
  usage: { ...ZERO_USAGE },
  estimatedCostUsd: 0,
  latencyMs: 0,
  toolCalls: [],
  error,
});

/** Time kept at the end of a shutdown's grace period to store the runs it interrupted. */
const STORE_RESERVE_MS = 1_000;

/** An asynchronous run that ended without a result of its own (a shutdown, an unexpected error). */
const failedRun = (running: RunDoc, error: RunDoc["error"], completedAt: Date): RunDoc => ({
  ...running,
  status: "failed",
  error,
  completedAt,
});

/** Why a run a shutdown cut short failed: something the caller can act on. */
const INTERRUPTED = {
  code: "unavailable",
  message: "the execution service shut down before the run finished; run it again",
};

/** Why a run a previous process left "running" failed (embedded mode, after a crash or a restart). */
const ORPHANED = {
  code: "unavailable",
  message: "Kiln stopped before the run finished (a restart or a crash); run it again",
};

/**
 * Stores as failed every asynchronous run a previous process left "running". Only for a store that
 * one process alone runs agents on (the embedded mode): there, nothing else can still be running
 * them. An asynchronous run's outbox intent is written before its record and cleared only after its
 * event left, so the runs to look at are those of the pending intents (a few), not every run; their
 * run.completed events then follow through the outbox. Returns how many runs it failed.
 */
export async function failOrphanedRuns(
  runs: Collection<RunDoc>,
  intents: Collection<RunEventIntentDoc>,
  now: () => Date,
): Promise<number> {
  let failed = 0;
  let after = "";
  for (;;) {
    const page = await intents.find(after ? { _id: { $gt: after } } : {}, { sort: { _id: 1 }, limit: 500 });
    for (const intent of page) {
      const { modifiedCount } = await runs.updateOne(
        { _id: intent._id, status: "running" },
        { $set: { status: "failed", error: ORPHANED, completedAt: now() } },
      );
      failed += modifiedCount;
    }
    const last = page.at(-1);
    if (page.length < 500 || !last) return failed;
    after = last._id;
  }
}

export function createAgentRunner(deps: AgentRunnerDeps) {
  const now = deps.now ?? (() => new Date());
  /** Asynchronous runs still executing in this process (awaited on close). */
  const inFlight = new Set<Promise<void>>();
  /** Aborted when a shutdown's grace period runs out: the runs still executing are stored as failed. */
  const shutdown = new AbortController();

  const callOptions = (ctx: CallContext) => ({
    contextValues: createContextValues().set(kPrincipal, ctx.principal).set(kRequestId, ctx.requestId),
  });

  async function authorize(organizationId: string, scope: string, ctx: CallContext) {
    await deps.identityAuth.authorize(ctx.principal, { organizationId, requireAi: true, scope }, ctx.requestId);
  }

  const modelFor = (requested: string | null, field: string) => resolveModelFor(deps.models, requested, field);

  /** The agent version from the catalog (with the caller's principal), every step's model checked. */
  async function resolveAgent(
    req: { organizationId: string; agentId: string; versionId: string; label?: string },
    ctx: CallContext,
  ): Promise<RunnableAgent> {
    const resolved: ResolveAgentVersionResponse = await remote(
      deps.catalog.resolveAgentVersion(
        { organizationId: req.organizationId, agentId: req.agentId, versionId: req.versionId, label: req.label ?? "" },
        callOptions(ctx),
      ),
    );
    const version = resolved.version;
    if (!version) throw new Error("catalog returned no agent version");
    let workflow: Workflow;
    try {
      workflow = parseWorkflow(version.workflowJson);
    } catch (e) {
      throw failedPrecondition(`the agent version cannot run: ${e instanceof Error ? e.message : String(e)}`);
    }
    const agent: RunnableAgent = {
      agentId: version.agentId,
      agentVersionId: version.id,
      organizationId: version.organizationId,
      workflow,
      prompts: new Map(),
      skills: new Map(),
      tools: new Map(),
    };
    const byId = new Map(resolved.steps.map((s) => [s.stepId, s]));
    for (const step of workflow.steps) {
      const r = byId.get(step.id);
      if (step.type === "prompt" && r?.prompt) {
        const prompt = runnableOf(r.prompt);
        modelFor(prompt.model, `steps.${step.id}.model`);
        agent.prompts.set(step.id, prompt);
      } else if (step.type === "skill" && r?.skill?.version) {
        const skill = r.skill;
        const tools = skill.tools;
        agent.skills.set(step.id, {
          skillId: skill.version?.skillId ?? "",
          skillVersionId: skill.version?.id ?? "",
          inputSchema: parse(skill.version?.inputSchemaJson, { type: "object" }),
          steps: skill.steps.map((s) => {
            if (!s.prompt || !s.step) throw new Error("catalog returned an incomplete skill step");
            const prompt = runnableOf(s.prompt, tools);
            modelFor(prompt.model, `steps.${step.id}.model`);
            return {
              alias: s.step.alias,
              variables: parse(s.step.variablesJson, {}) as Record<string, unknown>,
              prompt,
            };
          }),
        });
      } else if (step.type === "tool" && r?.tool) {
        agent.tools.set(step.id, toolOf(r.tool, version.organizationId));
      } else {
        throw failedPrecondition(`the agent version cannot run: step "${step.id}" has no resolved ${step.type}`);
      }
    }
    return agent;
  }

  function checkInputs(agent: RunnableAgent, inputs: Record<string, unknown>): FieldIssue[] {
    const check = deps.validator.check(agent.workflow.inputSchema, inputs);
    return check.ok ? [] : asInputs(check.issues);
  }

  async function runPromptStep(
    prompt: RunnablePrompt,
    variables: Record<string, unknown>,
    organizationId: string,
    signal?: AbortSignal,
  ) {
    const check = deps.validator.check(prompt.variablesSchema, variables);
    const ids = { promptId: prompt.promptId, promptVersionId: prompt.promptVersionId };
    if (!check.ok) {
      return {
        ...failedStep({
          code: "invalid_variables",
          message: check.issues.map((i) => `${i.field.replace(/^input/, "variables")} ${i.issue}`).join("; "),
        }),
        ...ids,
      };
    }
    const createdAt = now();
    const id = newId("run");
    const child = await storeRun(deps, id, async () =>
      runDocOf({
        id,
        kind: "prompt",
        organizationId,
        input: { variables },
        createdAt,
        ...ids,
        steps: [],
        single: await executePrompt(prompt, variables, {
          model: modelFor(prompt.model, "model"),
          tools: deps.tools,
          maxToolRounds: deps.maxToolRounds,
          signal,
        }),
        completedAt: now(),
      }),
    );
    return stepResultOfRun(child, ids);
  }

  async function runSkillStep(
    skill: SkillStep,
    input: Record<string, unknown>,
    organizationId: string,
    signal?: AbortSignal,
  ) {
    const check = deps.validator.check(skill.inputSchema, input);
    if (!check.ok) {
      return failedStep({
        code: "invalid_input",
        message: check.issues.map((i) => `${i.field} ${i.issue}`).join("; "),
      });
    }
    const createdAt = now();
    const id = newId("srun");
    const child = await storeRun(deps, id, async () =>
      runDocOf({
        id,
        kind: "skill",
        organizationId,
        input: { input },
        createdAt,
        skillId: skill.skillId,
        skillVersionId: skill.skillVersionId,
        steps: await executeSkillSteps(deps, skill.steps, input, signal),
        completedAt: now(),
      }),
    );
    return stepResultOfRun(child);
  }

  async function runToolStep(tool: ExecutableTool, input: Record<string, unknown>, signal?: AbortSignal) {
    const executed = await deps.tools.execute(tool, input, { signal });
    const call: ToolCallRecord = {
      toolKey: tool.toolKey,
      toolVersionId: tool.toolVersionId,
      input,
      output: executed.error ? null : executed.output,
      latencyMs: Math.round(executed.latencyMs),
      ...(executed.error ? { error: { code: executed.error.code, message: executed.error.message } } : {}),
    };
    const base = {
      provider: null,
      model: null,
      usage: { ...ZERO_USAGE },
      estimatedCostUsd: 0,
      latencyMs: call.latencyMs,
      toolCalls: [call],
    };
    if (call.error) return { ...base, status: "failed" as const, output: null, error: call.error };
    // A tool step's result is its output.json (api.md "Runs").
    return {
      ...base,
      status: "succeeded" as const,
      output: { text: JSON.stringify(executed.output), json: executed.output },
    };
  }

  /** The engine's step runner for one agent version. */
  const stepRunnerOf =
    (agent: RunnableAgent, signal?: AbortSignal) =>
    async (step: WorkflowStep, input: Record<string, unknown>): Promise<StepResult> => {
      const prompt = agent.prompts.get(step.id);
      if (prompt) return runPromptStep(prompt, input, agent.organizationId, signal);
      const skill = agent.skills.get(step.id);
      if (skill) return runSkillStep(skill, input, agent.organizationId, signal);
      const tool = agent.tools.get(step.id);
      if (tool) return runToolStep(tool, input, signal);
      return failedStep({ code: "unresolved_step", message: `step "${step.id}" has nothing to run` });
    };

  async function execute(
    agent: RunnableAgent,
    inputs: Record<string, unknown>,
    options: {
      id: string;
      createdAt: Date;
      signal?: AbortSignal;
      parent?: { runId: string; stepId: string; reused: AgentStepRecord[] };
    },
  ): Promise<RunDoc> {
    const result = await executeWorkflow(agent.workflow, inputs, stepRunnerOf(agent, options.signal), {
      ...(options.parent ? { startAt: options.parent.stepId, reused: options.parent.reused } : {}),
    });
    return agentRunDocOf({
      id: options.id,
      organizationId: agent.organizationId,
      inputs,
      agentId: agent.agentId,
      agentVersionId: agent.agentVersionId,
      createdAt: options.createdAt,
      completedAt: now(),
      result,
      ...(options.parent ? { parentRunId: options.parent.runId, rerunFromStepId: options.parent.stepId } : {}),
    });
  }

  /** An agent run the caller may use with `scope`: others' runs (and other kinds) are not found. */
  async function loadRun(id: string, scope: string, ctx: CallContext): Promise<RunDoc> {
    const run = await deps.runs.findOne({ _id: id });
    if (run?.kind !== "agent") throw notFound("agent run");
    await authorizeOnResource(deps.identityAuth, ctx.principal, {
      organizationId: run.organizationId,
      scope,
      what: "agent run",
      requestId: ctx.requestId,
    });
    return run;
  }

  const inputsOf = (run: RunDoc): Record<string, unknown> => {
    const input = JSON.parse(run.inputJson) as { inputs?: unknown };
    return isObject(input.inputs) ? input.inputs : {};
  };

  return {
    /** Sync: executes and stores. Async: stores a "running" record, answers it, finishes in the background. */
    async runAgent(
      req: {
        organizationId: string;
        agentId: string;
        inputsJson: string;
        versionId: string;
        label?: string;
        async: boolean;
      },
      ctx: CallContext,
    ): Promise<RunDoc> {
      await authorize(req.organizationId, "runs:write", ctx);
      const inputs = parseInputs(req.inputsJson);
      const agent = await resolveAgent(req, ctx);
      const issues = checkInputs(agent, inputs);
      if (issues.length > 0) throw invalidArgument("the inputs do not match the agent's input schema", issues);
      const id = newId("arun");
      const createdAt = now();
      if (!req.async) return storeRun(deps, id, () => execute(agent, inputs, { id, createdAt, signal: ctx.signal }));

      const running: RunDoc = {
        ...agentRunDocOf({
          id,
          organizationId: agent.organizationId,
          inputs,
          agentId: agent.agentId,
          agentVersionId: agent.agentVersionId,
          createdAt,
          completedAt: createdAt,
          result: { steps: [], output: null, error: null },
        }),
        status: "running",
        error: null,
      };
      // The intent first: the relay leaves it alone while the record says "running".
      await deps.outbox.intend(id);
      await insertRun(deps, running);
      // Not tied to the request: the caller is gone once it has the 202.
      const task = execute(agent, inputs, { id, createdAt, signal: shutdown.signal })
        .then((done) =>
          shutdown.signal.aborted && done.status !== "succeeded" ? failedRun(running, INTERRUPTED, now()) : done,
        )
        .catch((err: unknown): RunDoc => {
          if (shutdown.signal.aborted) return failedRun(running, INTERRUPTED, now());
          deps.logger.error({ err, runId: id }, "agent run failed unexpectedly");
          return failedRun(running, { code: "internal", message: "internal error" }, now());
        })
        .then(async (done) => {
          await deps.runs.replaceOne({ _id: id }, done);
          deps.outbox.publish(done);
        })
        .catch((err: unknown) => deps.logger.error({ err, runId: id }, "agent run could not be stored"))
        .finally(() => inFlight.delete(task));
      inFlight.add(task);
      return running;
    },

    async rerunFromStep(
      req: { runId: string; stepId: string; inputsJson?: string },
      ctx: CallContext,
    ): Promise<RunDoc> {
      const original = await loadRun(req.runId, "runs:write", ctx);
      if (original.status === "running") throw failedPrecondition("the run is still running");
      const executed = stepRecordsOf(original);
      const at = executed.findIndex((s) => s.stepId === req.stepId);
      if (at < 0) {
        throw invalidArgument(`the run never executed step "${req.stepId}"`, [
          { field: "stepId", issue: "is not a step this run executed" },
        ]);
      }
      const inputs = req.inputsJson === undefined ? inputsOf(original) : parseInputs(req.inputsJson);
      const agent = await resolveAgent(
        {
          organizationId: original.organizationId,
          agentId: original.agentId ?? "",
          versionId: original.agentVersionId ?? "",
        },
        ctx,
      );
      const issues = checkInputs(agent, inputs);
      if (issues.length > 0) throw invalidArgument("the inputs do not match the agent's input schema", issues);
      // Steps before stepId keep their recorded outputs; they ran in the parent run, not here.
      const reused: AgentStepRecord[] = executed.slice(0, at).map((s) => {
        const { runId: _runId, ...rest } = s;
        return { ...rest, reused: true, usage: { ...ZERO_USAGE }, estimatedCostUsd: 0, latencyMs: 0, toolCalls: [] };
      });
      const id = newId("arun");
      return storeRun(deps, id, () =>
        execute(agent, inputs, {
          id,
          createdAt: now(),
          signal: ctx.signal,
          parent: { runId: original._id, stepId: req.stepId, reused },
        }),
      );
    },

    async loadInputs(req: { runId: string; versionId: string }, ctx: CallContext) {
      const run = await loadRun(req.runId, "runs:write", ctx);
      const inputs = inputsOf(run);
      const agent = await resolveAgent(
        { organizationId: run.organizationId, agentId: run.agentId ?? "", versionId: req.versionId },
        ctx,
      );
      const errors: InputIssue[] = checkInputs(agent, inputs).map((i) => ({
        path: i.field,
        code: issueCode(i.issue),
        message: `${i.field} ${i.issue}`,
      }));
      return {
        agentId: agent.agentId,
        agentVersionId: agent.agentVersionId,
        inputs,
        valid: errors.length === 0,
        errors,
      };
    },

    async compare(req: { runIds: string[] }, ctx: CallContext): Promise<AgentRunComparison> {
      const ids = req.runIds;
      if (ids.length < MIN_COMPARED || ids.length > MAX_COMPARED) {
        throw invalidArgument(`compare ${MIN_COMPARED} to ${MAX_COMPARED} runs`, [
          { field: "runIds", issue: `must list ${MIN_COMPARED} to ${MAX_COMPARED} run ids` },
        ]);
      }
      if (new Set(ids).size !== ids.length) {
        throw invalidArgument("a run is listed twice", [{ field: "runIds", issue: "must not repeat an id" }]);
      }
      const runs: RunDoc[] = [];
      for (const id of ids) runs.push(await loadRun(id, "runs:read", ctx));
      if (new Set(runs.map((r) => r.organizationId)).size > 1) {
        throw invalidArgument("the runs belong to different organizations", [
          { field: "runIds", issue: "must be runs of one organization" },
        ]);
      }
      // Steps aligned by id in order of first appearance; a step executed twice (a loop) shows its last execution.
      const order: string[] = [];
      const perRun = runs.map((run) => {
        const byStep = new Map<string, AgentStepRecord>();
        for (const s of stepRecordsOf(run)) {
          if (!order.includes(s.stepId)) order.push(s.stepId);
          byStep.set(s.stepId, s);
        }
        return { run, byStep };
      });
      return {
        runs: runs.map((r) => ({
          id: r._id,
          agentId: r.agentId ?? "",
          agentVersionId: r.agentVersionId ?? "",
          status: r.status,
          createdAt: r.createdAt.toISOString(),
        })),
        steps: order.map((stepId) => {
          const found = perRun.map(({ byStep }) => byStep.get(stepId));
          const first = found[0];
          return {
            stepId,
            byRun: Object.fromEntries(
              perRun.map(({ run, byStep }) => {
                const s = byStep.get(stepId);
                return [
                  run._id,
                  s ? { status: s.status, output: s.output, usage: s.usage, latencyMs: s.latencyMs } : null,
                ];
              }),
            ),
            outputsEqual: found.every((s) => s !== undefined && isDeepStrictEqual(s.output, first?.output)),
          };
        }),
        totals: Object.fromEntries(
          runs.map((r) => [r._id, { usage: r.usage, estimatedCostUsd: r.estimatedCostUsd, latencyMs: r.latencyMs }]),
        ),
      };
    },

    /**
     * Waits for the asynchronous runs this process still executes; with `graceMs`, those still
     * running a second before it ends are aborted and stored as failed, never left "running".
     */
    async drain(graceMs?: number): Promise<void> {
      const timer =
        graceMs === undefined ? undefined : setTimeout(() => shutdown.abort(), Math.max(0, graceMs - STORE_RESERVE_MS));
      try {
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

export type AgentRunner = ReturnType<typeof createAgentRunner>;
