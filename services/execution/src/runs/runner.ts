import { setImmediate as nextTurn } from "node:timers/promises";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, createContextValues } from "@connectrpc/connect";
import { authorizeOnResource, type IdentityAuth } from "@kiln/kit/authorizer";
import { DomainError, type FieldIssue, failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { findPage } from "@kiln/kit/pagination";
import { kPrincipal, kRequestId, type Principal } from "@kiln/kit/principal";
import { remote } from "@kiln/kit/rpc/errors";
import { type Collection, createGroupInserter, type GroupInserter } from "@kiln/kit/store";
import type { CatalogService, ResolvedPrompt, ResolvedTool } from "@kiln/proto/catalog";
import type { RunSchema } from "@kiln/proto/execution";
import type { RunEventOutbox } from "../events/run-events.js";
import type { ChatMessage, ResponseFormat } from "../providers/provider.js";
import type { ProviderRegistry, ResolvedModel } from "../providers/provider-registry.js";
import type { RunDoc } from "../store/run-store.js";
import type { InputValidator } from "../tools/input-validator.js";
import type { ExecutableTool, ToolExecutor } from "../tools/tool-executor.js";
import { bindVariables, type StepOutput } from "./bindings.js";
import { executePrompt, failedBeforeAnswer, type PromptExecution, type RunnablePrompt } from "./prompt-execution.js";
import { kGenerationRead } from "./resolve-cache.js";

export interface RunnerDeps {
  runs: Collection<RunDoc>;
  outbox: RunEventOutbox;
  catalog: Client<typeof CatalogService>;
  identityAuth: IdentityAuth;
  models: ProviderRegistry;
  tools: ToolExecutor;
  validator: InputValidator;
  maxToolRounds: number;
  now?: () => Date;
}

export interface CallContext {
  principal: Principal;
  requestId?: string;
  signal?: AbortSignal;
  /** The catalog's change counter, read since the call arrived (resolve-cache.ts). */
  generationRead?: Promise<number>;
}

export interface StepRecord {
  stepId: string;
  type: "prompt";
  status: "succeeded" | "failed";
  input: Record<string, unknown>;
  output: StepOutput | null;
  promptId: string;
  promptVersionId: string;
  execution: PromptExecution;
}

const parse = (text: string | undefined, fallback: unknown): unknown => (text ? JSON.parse(text) : fallback);

export function toolOf(t: ResolvedTool, organizationId: string): ExecutableTool & { description: string } {
  return {
    toolKey: t.toolKey,
    toolVersionId: t.toolVersionId,
    type: t.type,
    config: parse(t.configJson, {}),
    inputSchema: parse(t.inputSchemaJson, { type: "object" }),
    organizationId,
    description: t.description,
  };
}

function responseFormatOf(text: string): ResponseFormat {
  const rf = parse(text, { type: "text" }) as { type?: string; name?: string; schema?: Record<string, unknown> };
  return rf.type === "json_schema" && rf.schema
    ? { type: "json_schema", name: rf.name ?? "response", schema: rf.schema }
    : { type: "text" };
}

/** The catalog's resolved prompt version as something to run, with extra (skill-level) tools. */
export function runnableOf(resolved: ResolvedPrompt, extraTools: ResolvedTool[] = []): RunnablePrompt {
  const v = resolved.version;
  if (!v) throw new Error("catalog returned no prompt version");
  const byKey = new Map<string, ResolvedTool>();
  for (const t of [...resolved.tools, ...extraTools]) byKey.set(t.toolKey, t);
  return {
    promptId: v.promptId,
    promptVersionId: v.id,
    systemPrompt: v.systemPrompt,
    developerPrompt: v.developerPrompt ?? null,
    variablesSchema: parse(v.variablesSchemaJson, { type: "object" }),
    responseFormat: responseFormatOf(v.responseFormatJson),
    temperature: v.temperature ?? null,
    maxOutputTokens: v.maxOutputTokens ?? null,
    model: v.model ?? null,
    tools: [...byKey.values()].map((t) => toolOf(t, v.organizationId)),
  };
}

/** RunPromptRequest.messages_json: user and assistant messages with text content; "" is none. */
function parseMessages(text: string): ChatMessage[] {
  if (text === "") return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidArgument("messages is not valid JSON", [{ field: "messages", issue: "must be a JSON array" }]);
  }
  if (!Array.isArray(value))
    throw invalidArgument("messages must be an array", [{ field: "messages", issue: "must be an array" }]);
  return value.map((m: unknown, i): ChatMessage => {
    const { role, content } = (m ?? {}) as { role?: unknown; content?: unknown };
    if (role !== "user" && role !== "assistant") {
      throw invalidArgument("a message has an unsupported role", [
        { field: `messages[${i}].role`, issue: 'must be "user" or "assistant"' },
      ]);
    }
    if (typeof content !== "string") {
      throw invalidArgument("a message has no text content", [
        { field: `messages[${i}].content`, issue: "must be a string" },
      ]);
    }
    return { role, content };
  });
}

function parseObject(text: string, field: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = text ? JSON.parse(text) : {};
  } catch {
    throw invalidArgument(`${field} is not valid JSON`, [{ field, issue: "must be a JSON object" }]);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalidArgument(`${field} must be an object`, [{ field, issue: "must be an object" }]);
  }
  return value as Record<string, unknown>;
}

const renamed = (issues: FieldIssue[], prefix: string) =>
  issues.map((i) => ({ field: i.field.replace(/^input/, prefix), issue: i.issue }));

/** The request's model, else the version's, else the deployment's default; 400 naming `field` when unusable. */
export function resolveModelFor(
  models: ProviderRegistry,
  requested: string | null | undefined,
  field: string,
): ResolvedModel {
  try {
    return models.resolve(requested ?? undefined);
  } catch (e) {
    if (e instanceof DomainError && field !== "model") {
      throw new DomainError(
        e.kind,
        e.message,
        e.details.map((d) => ({ ...d, field })),
      );
    }
    throw e;
  }
}

/** One step of a skill's composition, ready to run. */
export interface SkillStep {
  alias: string;
  variables: Record<string, unknown>;
  prompt: RunnablePrompt;
}

/**
 * Runs a skill's composition in order (skill runs, previews and agent skill steps alike); each
 * step sees the input and earlier outputs. Stops at the first failed step.
 */
export async function executeSkillSteps(
  deps: Pick<RunnerDeps, "models" | "tools" | "validator" | "maxToolRounds">,
  steps: SkillStep[],
  input: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<StepRecord[]> {
  const outputs = new Map<string, StepOutput>();
  const records: StepRecord[] = [];
  for (const step of steps) {
    const declared = Object.keys(
      (step.prompt.variablesSchema as { properties?: Record<string, unknown> }).properties ?? {},
    );
    const variables = bindVariables(declared, step.variables, input, outputs);
    const model = resolveModelFor(deps.models, step.prompt.model, `steps.${step.alias}.model`);
    const check = deps.validator.check(step.prompt.variablesSchema, variables);
    const issues = check.ok ? [] : renamed(check.issues, `steps.${step.alias}.variables`);
    const execution: PromptExecution =
      issues.length > 0
        ? failedBeforeAnswer(model, {
            code: "invalid_variables",
            message: issues.map((i) => `${i.field} ${i.issue}`).join("; "),
          })
        : await executePrompt(step.prompt, variables, {
            model,
            tools: deps.tools,
            maxToolRounds: deps.maxToolRounds,
            signal,
          });
    records.push({
      stepId: step.alias,
      type: "prompt",
      status: execution.status,
      input: variables,
      output: execution.output,
      promptId: step.prompt.promptId,
      promptVersionId: step.prompt.promptVersionId,
      execution,
    });
    if (execution.status === "failed" || !execution.output) break;
    outputs.set(step.alias, execution.output);
  }
  return records;
}

/** The run use cases: prompt runs, skill runs and previews, and reading runs back. */
export function createRunner(deps: RunnerDeps) {
  const now = deps.now ?? (() => new Date());

  const callOptions = (ctx: CallContext) => ({
    contextValues: createContextValues()
      .set(kPrincipal, ctx.principal)
      .set(kRequestId, ctx.requestId)
      .set(kGenerationRead, ctx.generationRead),
  });

  const modelFor = (requested: string | null | undefined, field: string) =>
    resolveModelFor(deps.models, requested, field);

  function checkVariables(prompt: RunnablePrompt, variables: Record<string, unknown>, field: string): FieldIssue[] {
    const check = deps.validator.check(prompt.variablesSchema, variables);
    return check.ok ? [] : renamed(check.issues, field);
  }

  const executeSkill = (steps: SkillStep[], input: Record<string, unknown>, ctx: CallContext) =>
    executeSkillSteps(deps, steps, input, ctx.signal);

  async function resolveSkill(
    req: { organizationId: string; skillId: string; inputJson: string; versionId: string; label?: string },
    ctx: CallContext,
    preferDraft: boolean,
  ) {
    await deps.identityAuth.authorize(
      ctx.principal,
      { organizationId: req.organizationId, requireAi: true, scope: "runs:write" },
      ctx.requestId,
    );
    const input = parseObject(req.inputJson, "input");
    const resolved = await remote(
      deps.catalog.resolveSkillVersion(
        {
          organizationId: req.organizationId,
          skillId: req.skillId,
          versionId: req.versionId,
          preferDraft,
          label: req.label ?? "",
        },
        callOptions(ctx),
      ),
    );
    const version = resolved.version;
    if (!version) throw new Error("catalog returned no skill version");
    // A state conflict (api.md "Conventions"), not a run: an empty draft has nothing to execute.
    if (resolved.steps.length === 0) {
      throw failedPrecondition(`skill version ${version.version} has no prompts to run`, [
        { field: "promptComposition", issue: "is empty" },
      ]);
    }
    const check = deps.validator.check(parse(version.inputSchemaJson, { type: "object" }), input);
    if (!check.ok) throw invalidArgument("the input does not match the skill's input schema", check.issues);
    const steps = resolved.steps.map((s) => {
      if (!s.prompt || !s.step) throw new Error("catalog returned an incomplete step");
      const prompt = runnableOf(s.prompt, resolved.tools);
      // Every step's model must exist before anything runs.
      modelFor(prompt.model, `steps.${s.step.alias}.model`);
      return { alias: s.step.alias, variables: parse(s.step.variablesJson, {}) as Record<string, unknown>, prompt };
    });
    return { version, input, steps };
  }

  return {
    async runPrompt(
      req: {
        organizationId: string;
        promptId: string;
        variablesJson: string;
        versionId: string;
        label?: string;
        model: string;
        messagesJson?: string;
      },
      ctx: CallContext,
    ): Promise<RunDoc> {
      await deps.identityAuth.authorize(
        ctx.principal,
        { organizationId: req.organizationId, requireAi: true, scope: "runs:write" },
        ctx.requestId,
      );
      const variables = parseObject(req.variablesJson, "variables");
      const extraMessages = parseMessages(req.messagesJson ?? "");
      const { prompt: resolved } = await remote(
        deps.catalog.resolvePromptVersion(
          {
            organizationId: req.organizationId,
            promptId: req.promptId,
            versionId: req.versionId,
            label: req.label ?? "",
          },
          callOptions(ctx),
        ),
      );
      if (!resolved) throw new Error("catalog returned no prompt");
      const prompt = runnableOf(resolved);
      const model = modelFor(req.model || prompt.model, "model");
      const issues = checkVariables(prompt, variables, "variables");
      if (issues.length > 0) throw invalidArgument("the variables do not match the version's variables schema", issues);
      const createdAt = now();
      const id = newId("run");
      return storeRun(deps, id, async () =>
        runDocOf({
          id,
          kind: "prompt",
          organizationId: req.organizationId,
          input: extraMessages.length > 0 ? { variables, messages: extraMessages } : { variables },
          createdAt,
          promptId: prompt.promptId,
          promptVersionId: prompt.promptVersionId,
          steps: [],
          single: await executePrompt(prompt, variables, {
            model,
            tools: deps.tools,
            maxToolRounds: deps.maxToolRounds,
            signal: ctx.signal,
            extraMessages,
          }),
          completedAt: now(),
        }),
      );
    },

    async runSkill(
      req: { organizationId: string; skillId: string; inputJson: string; versionId: string; label?: string },
      ctx: CallContext,
    ): Promise<RunDoc> {
      const { version, input, steps } = await resolveSkill(req, ctx, false);
      const createdAt = now();
      const id = newId("srun");
      return storeRun(deps, id, async () =>
        runDocOf({
          id,
          kind: "skill",
          organizationId: req.organizationId,
          input: { input },
          createdAt,
          skillId: version.skillId,
          skillVersionId: version.id,
          steps: await executeSkill(steps, input, ctx),
          completedAt: now(),
        }),
      );
    },

    /** Runs the draft (else the published version) and stores nothing; provider failures are 502/504. */
    async previewSkill(
      req: { organizationId: string; skillId: string; inputJson: string; versionId: string; label?: string },
      ctx: CallContext,
    ): Promise<RunDoc> {
      const { version, input, steps } = await resolveSkill(req, ctx, true);
      const createdAt = now();
      const records = await executeSkill(steps, input, ctx);
      const failed = records.find((r) => r.execution.error);
      const code = failed?.execution.error?.code;
      if (code === "provider_error" || code === "provider_timeout") {
        throw new DomainError(code, failed?.execution.error?.message ?? "the model provider failed");
      }
      return runDocOf({
        id: "",
        kind: "skill",
        organizationId: req.organizationId,
        input: { input },
        createdAt,
        completedAt: now(),
        skillId: version.skillId,
        skillVersionId: version.id,
        steps: records,
      });
    },

    /** The organization's runs, newest first, filtered by kind, status, model and creation time. */
    async listRuns(
      req: {
        organizationId: string;
        limit: number;
        cursor: string;
        kind: string;
        status: string;
        model: string;
        createdAfter?: Date;
        createdBefore?: Date;
      },
      ctx: CallContext,
    ) {
      if (req.organizationId === "")
        throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
      await deps.identityAuth.authorize(
        ctx.principal,
        { organizationId: req.organizationId, requireAi: true, scope: "runs:read" },
        ctx.requestId,
      );
      const created: Record<string, Date> = {};
      if (req.createdAfter) created.$gte = req.createdAfter;
      if (req.createdBefore) created.$lt = req.createdBefore;
      const filter = {
        organizationId: req.organizationId,
        ...(req.kind ? { kind: req.kind } : {}),
        ...(req.status ? { status: req.status } : {}),
        ...(req.model ? { model: req.model } : {}),
        ...(Object.keys(created).length > 0 ? { createdAt: created } : {}),
      };
      return findPage(deps.runs, filter, req);
    },

    async getRun(req: { id: string; kind: string }, ctx: CallContext): Promise<RunDoc> {
      const what = req.kind === "skill" || req.kind === "judge" ? `${req.kind} run` : "run";
      const run = await deps.runs.findOne({ _id: req.id });
      if (!run || (req.kind && run.kind !== req.kind)) throw notFound(what);
      await authorizeOnResource(deps.identityAuth, ctx.principal, {
        organizationId: run.organizationId,
        scope: "runs:read",
        what,
        requestId: ctx.requestId,
      });
      return run;
    },
  };
}

export type Runner = ReturnType<typeof createRunner>;

/**
 * Stores the run `execute` produces, with its run.completed: the outbox intent is inserted while
 * the run executes (it must exist before the run does), the run is inserted, and the event leaves
 * in the background. The caller's answer waits for one insert after the execution, not for the bus.
 * The intent's insert starts on the next turn of the event loop, once the execution has sent its
 * first provider request: building and sending a write is not put in front of the model call.
 */
export async function storeRun(
  deps: Pick<RunnerDeps, "runs" | "outbox">,
  id: string,
  execute: () => Promise<RunDoc>,
): Promise<RunDoc> {
  const intent = nextTurn().then(() => deps.outbox.intend(id));
  // Awaited after the execution: a store that refuses the intent fails the request then.
  intent.catch(() => undefined);
  const doc = await execute();
  await intent;
  await insertRun(deps, doc);
  deps.outbox.publish(doc);
  return doc;
}

/** Runs stored at once under load go to the store together (one group inserter per collection). */
const runInserters = new WeakMap<Collection<RunDoc>, GroupInserter<RunDoc>>();

function runInserter(runs: Collection<RunDoc>): GroupInserter<RunDoc> {
  let inserter = runInserters.get(runs);
  if (!inserter) {
    inserter = createGroupInserter(runs);
    runInserters.set(runs, inserter);
  }
  return inserter;
}

/** Inserts a run whose outbox intent exists; a refused insert forgets the intent (no run, no event). */
export async function insertRun(deps: Pick<RunnerDeps, "runs" | "outbox">, doc: RunDoc): Promise<void> {
  try {
    await runInserter(deps.runs).insert(doc);
  } catch (e) {
    deps.outbox.abandon(doc._id);
    throw e;
  }
}

interface RunDocInput {
  id: string;
  kind: RunDoc["kind"];
  organizationId: string;
  input: Record<string, unknown>;
  createdAt: Date;
  completedAt: Date;
  promptId?: string;
  promptVersionId?: string;
  skillId?: string;
  skillVersionId?: string;
  steps: StepRecord[];
  /** A prompt run: its one execution. */
  single?: PromptExecution;
}

/**
 * The run record (api.md "Runs"): multi-step runs sum usage, cost and tool calls over their steps;
 * provider and model are set when every step agrees; the cost is null when any part has no price.
 */
export function runDocOf(r: RunDocInput): RunDoc {
  const executions = r.single ? [r.single] : r.steps.map((s) => s.execution);
  const last = executions.at(-1);
  const failed = executions.find((e) => e.status === "failed");
  const usage = { inputTokens: 0, outputTokens: 0 };
  let cost: number | null = 0;
  const counts = new Map<string, number>();
  const toolCalls = executions.flatMap((e) => e.toolCalls);
  for (const e of executions) {
    usage.inputTokens += e.usage.inputTokens;
    usage.outputTokens += e.usage.outputTokens;
    cost = cost === null || e.estimatedCostUsd === null ? null : cost + e.estimatedCostUsd;
  }
  for (const call of toolCalls) counts.set(call.toolKey, (counts.get(call.toolKey) ?? 0) + 1);
  const agree = <K extends "provider" | "model">(key: K) =>
    executions.length > 0 && executions.every((e) => e[key] === executions[0]?.[key])
      ? (executions[0]?.[key] ?? null)
      : null;
  const succeeded = !failed && last?.status === "succeeded" && last.output !== null;
  return {
    _id: r.id,
    kind: r.kind,
    organizationId: r.organizationId,
    status: succeeded ? "succeeded" : "failed",
    inputJson: JSON.stringify(r.input),
    outputJson: succeeded && last?.output ? JSON.stringify(last.output) : null,
    provider: agree("provider"),
    model: agree("model"),
    usage,
    estimatedCostUsd: cost,
    latencyMs: Math.max(0, r.completedAt.getTime() - r.createdAt.getTime()),
    toolCallCount: toolCalls.length,
    toolCallCounts: [...counts].map(([toolKey, count]) => ({ toolKey, count })),
    toolCallsJson: JSON.stringify(toolCalls),
    stepsJson: JSON.stringify(
      r.steps.map((s) => ({
        stepId: s.stepId,
        type: s.type,
        status: s.status,
        input: s.input,
        output: s.output,
        promptId: s.promptId,
        promptVersionId: s.promptVersionId,
        provider: s.execution.provider,
        model: s.execution.model,
        usage: s.execution.usage,
        estimatedCostUsd: s.execution.estimatedCostUsd,
        latencyMs: s.execution.latencyMs,
        toolCalls: s.execution.toolCalls,
        error: s.execution.error ?? null,
      })),
    ),
    error: failed?.error ?? (succeeded ? null : { code: "no_output", message: "the run produced no output" }),
    promptId: r.promptId ?? "",
    promptVersionId: r.promptVersionId ?? "",
    skillId: r.skillId ?? "",
    skillVersionId: r.skillVersionId ?? "",
    createdAt: r.createdAt,
    completedAt: r.completedAt,
  };
}

/** The proto of a stored (or previewed) run. */
export function runToProto(run: RunDoc, preview = false): MessageInitShape<typeof RunSchema> {
  const steps = JSON.parse(run.stepsJson) as Array<Record<string, unknown>>;
  const callOf = (c: {
    toolKey: string;
    toolVersionId: string;
    input: unknown;
    output: unknown;
    latencyMs: number;
    error?: { code: string; message: string };
  }) => ({
    toolKey: c.toolKey,
    toolVersionId: c.toolVersionId,
    inputJson: JSON.stringify(c.input ?? null),
    outputJson: c.error ? undefined : JSON.stringify(c.output ?? null),
    latencyMs: BigInt(c.latencyMs),
    error: c.error,
  });
  return {
    id: run._id,
    kind: run.kind,
    organizationId: run.organizationId,
    status: run.status,
    inputJson: run.inputJson,
    outputJson: run.outputJson ?? undefined,
    provider: run.provider ?? undefined,
    model: run.model ?? undefined,
    usage: { inputTokens: BigInt(run.usage.inputTokens), outputTokens: BigInt(run.usage.outputTokens) },
    estimatedCostUsd: run.estimatedCostUsd ?? undefined,
    latencyMs: BigInt(run.latencyMs),
    toolCallCount: BigInt(run.toolCallCount),
    toolCallCounts: Object.fromEntries(run.toolCallCounts.map((c) => [c.toolKey, BigInt(c.count)])),
    toolCalls: (JSON.parse(run.toolCallsJson) as Parameters<typeof callOf>[0][]).map(callOf),
    error: run.error ?? undefined,
    createdAt: timestampFromDate(run.createdAt),
    // A running (asynchronous agent) run has not completed.
    completedAt: run.status === "running" ? undefined : timestampFromDate(run.completedAt),
    promptId: run.promptId,
    promptVersionId: run.promptVersionId,
    skillId: run.skillId,
    skillVersionId: run.skillVersionId,
    preview,
    agentId: run.agentId ?? "",
    agentVersionId: run.agentVersionId ?? "",
    parentRunId: run.parentRunId ?? "",
    rerunFromStepId: run.rerunFromStepId ?? "",
    steps: steps.map((s) => {
      const usage = s.usage as { inputTokens: number; outputTokens: number };
      return {
        stepId: String(s.stepId),
        type: String(s.type),
        status: String(s.status),
        inputJson: JSON.stringify(s.input ?? {}),
        outputJson: s.output ? JSON.stringify(s.output) : undefined,
        provider: (s.provider as string | null) ?? undefined,
        model: (s.model as string | null) ?? undefined,
        usage: { inputTokens: BigInt(usage.inputTokens), outputTokens: BigInt(usage.outputTokens) },
        estimatedCostUsd: (s.estimatedCostUsd as number | null) ?? undefined,
        latencyMs: BigInt(Number(s.latencyMs)),
        toolCalls: (s.toolCalls as Parameters<typeof callOf>[0][]).map(callOf),
        error: (s.error as { code: string; message: string } | null) ?? undefined,
        reused: s.reused === true,
        runId: String(s.runId ?? ""),
        promptId: String(s.promptId ?? ""),
        promptVersionId: String(s.promptVersionId ?? ""),
      };
    }),
  };
}
