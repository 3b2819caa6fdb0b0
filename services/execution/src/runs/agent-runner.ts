/**
 * The agent runtime (api.md "Agents", the stable part): run an agent version's workflow (sync, or
 * async with a "running" record that is polled), rerun from a step reusing earlier outputs, load a
 * run's inputs against another version, and compare runs. An agent run reads in the same direction
 * as the others: resolve (agent-resolve.ts) → run the workflow, each prompt or skill step a stored
 * child run with its own run.completed (agent-steps.ts) → build the record (agent-record.ts) →
 * store and publish (store-run.ts).
 */
import { authorizeOnResource, type IdentityAuth } from "@kiln/kit/authorizer";
import { type FieldIssue, failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import type { JsonText } from "@kiln/kit/json-text";
import type { Logger } from "@kiln/kit/logger";
import type { TokenLimit } from "../limits/token-limits.js";
import type { RunDoc } from "../store/run-store.js";
import type { RunTraceContext } from "../traces/run-trace-context.js";
import { type AgentRunComparison, checkComparedIds, compareAgentRuns } from "./agent-compare.js";
import { agentRunDocOf, cancelledRun, failedRun, INTERRUPTED, stepRecordsOf, ZERO_USAGE } from "./agent-record.js";
import { type AgentResolveDeps, type RunnableAgent, resolveAgent } from "./agent-resolve.js";
import { stepRunnerOf } from "./agent-steps.js";
import { type CallContext, runCallerOf } from "./call-context.js";
import { type InputIssue, inputIssueCode, inputsOf, parseObject, renamed } from "./run-input.js";
import type { RunLeases } from "./run-leases.js";
import { createRunSlots } from "./run-slots.js";
import { admitted, insertRun, intendRun, priorRun, stepDeps, storeRun } from "./store-run.js";
import type { StoredRunDeps } from "./stored-runs.js";
import { type AgentStepRecord, executeWorkflow } from "./workflow-engine.js";

export type { AgentRunComparison } from "./agent-compare.js";
export type { InputIssue } from "./run-input.js";

export interface AgentRunnerDeps extends AgentResolveDeps, Omit<StoredRunDeps, "now"> {
  identityAuth: IdentityAuth;
  logger: Logger;
  /** Leases of the asynchronous runs this process runs. */
  leases: RunLeases;
  /** Asynchronous runs at once; past it a new one is refused (`resource_exhausted`); default no cap. */
  maxAsyncRuns?: number;
  now?: () => Date;
}

/** Time kept at the end of a shutdown's grace period to store the runs it interrupted. */
const STORE_RESERVE_MS = 1_000;

export function createAgentRunner(deps: AgentRunnerDeps) {
  const stored: StoredRunDeps = { ...deps, now: deps.now ?? (() => new Date()) };
  const now = stored.now;
  /** Asynchronous runs still executing in this process (awaited on close). */
  const inFlight = new Set<Promise<void>>();
  const slots = createRunSlots(deps.maxAsyncRuns ?? Number.POSITIVE_INFINITY);
  /** Aborted when a shutdown's grace period runs out: the runs still executing are stored as failed. */
  const shutdown = new AbortController();

  async function authorize(organizationId: string, scope: string, ctx: CallContext) {
    await deps.identityAuth.authorize(ctx.principal, { organizationId, requireAi: true, scope }, ctx.requestId);
  }

  function checkInputs(agent: RunnableAgent, inputs: Record<string, unknown>): FieldIssue[] {
    const check = deps.validator.check(agent.workflow.inputSchema, inputs);
    return check.ok ? [] : renamed(check.issues, "inputs");
  }

  async function execute(
    agent: RunnableAgent,
    inputs: Record<string, unknown>,
    options: {
      id: string;
      createdAt: Date;
      signal?: AbortSignal;
      parent?: { runId: string; stepId: string; reused: AgentStepRecord[] };
      label?: string;
      /** The agent run's trace context: its steps' child runs are recorded in its trace. */
      trace?: RunTraceContext;
      /** The agent run's key's token-per-minute limit: its steps' tokens count there. */
      keyLimits?: readonly TokenLimit[];
      /** The agent run's API key: its steps' runs are the key's too (usage by key, key budgets). */
      apiKeyId?: string;
    },
  ): Promise<RunDoc> {
    // Admitted under the plan's limit, its budgets and its key's tokens a minute; its steps' runs count, and are not refused.
    const { signal, trace, apiKeyId } = options;
    const stepDepsOf = { ...stepDeps(stored, options.keyLimits), models: agent.models };
    const steps = stepRunnerOf(stepDepsOf, agent, { signal, trace, apiKeyId });
    const result = await executeWorkflow(agent.workflow, inputs, steps, {
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
      label: options.label,
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

  return {
    /** Sync: executes and stores. Async: stores a "running" record, answers it, finishes in the background. */
    async runAgent(
      req: {
        organizationId: string;
        agentId: string;
        inputs?: JsonText;
        versionId: string;
        label?: string;
        async: boolean;
      },
      ctx: CallContext,
    ): Promise<RunDoc> {
      await authorize(req.organizationId, "runs:write", ctx);
      const inputs = parseObject(req.inputs, "inputs");
      const agent = await resolveAgent(deps, req, ctx);
      const issues = checkInputs(agent, inputs);
      if (issues.length > 0) throw invalidArgument("the inputs do not match the agent's input schema", issues);
      const id = newId("arun");
      const start = { id, organizationId: agent.organizationId, ...runCallerOf(ctx) };
      const createdAt = now();
      const label = req.label || undefined;
      const base = { id, createdAt, label, trace: ctx.trace, keyLimits: start.tokenLimits, apiKeyId: start.apiKeyId };
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
          label,
        }),
        status: "running",
        error: null,
        ...(req.async && { leaseUntil: deps.leases.initial() }),
        ...(start.apiKeyId && { apiKeyId: start.apiKeyId }),
      };
      if (!req.async) {
        // Cancelled by its caller: stored as cancelled (with the steps it finished, when it got that far).
        return storeRun(
          deps,
          start,
          () =>
            execute(agent, inputs, { ...base, signal: ctx.signal }).then(
              (done) => (ctx.signal?.aborted && done.status !== "succeeded" ? cancelledRun(done, now()) : done),
              (err: unknown) => {
                if (ctx.signal?.aborted) return cancelledRun(running, now());
                throw err;
              },
            ),
          ctx.trace,
        );
      }
      // A retry of a call whose run was stored answers that run (store-run.ts).
      const prior = await priorRun(deps, start);
      if (prior) return prior;
      // Admitted under the plan's limit, then the intent: the relay leaves it alone while the record says "running".
      const release = await admitted(deps, start, () =>
        slots.takeFor(() => intendRun(deps, start).then(() => insertRun(deps, running))),
      );
      deps.leases.hold(id);
      // Not tied to the request: the caller is gone once it has the 202. Its trace is the one the
      // 202 answered: the steps' child runs are recorded in it, the agent run once it finishes.
      const task = execute(agent, inputs, { ...base, signal: shutdown.signal })
        .then((done) =>
          shutdown.signal.aborted && done.status !== "succeeded" ? failedRun(running, INTERRUPTED, now()) : done,
        )
        .catch((err: unknown): RunDoc => {
          if (shutdown.signal.aborted) return failedRun(running, INTERRUPTED, now());
          deps.logger.error({ err, runId: id }, "agent run failed unexpectedly");
          return failedRun(running, { code: "internal", message: "internal error" }, now());
        })
        .then(async (done) => {
          // Only over the running record: a replica that found its lease run out failed it already.
          const { modifiedCount } = await deps.runs.replaceOne({ _id: id, status: "running" }, done);
          if (modifiedCount === 0) return deps.logger.warn({ runId: id }, "agent run finished after its lease ran out");
          deps.outbox.publish(done);
          deps.onStored?.(done, ctx.trace);
        })
        .catch((err: unknown) => deps.logger.error({ err, runId: id }, "agent run could not be stored"))
        .finally(() => {
          release();
          deps.allowance?.finished(start.organizationId, id, true);
          deps.leases.release(id);
          inFlight.delete(task);
        });
      inFlight.add(task);
      return running;
    },

    async rerunFromStep(req: { runId: string; stepId: string; inputs?: JsonText }, ctx: CallContext): Promise<RunDoc> {
      const original = await loadRun(req.runId, "runs:write", ctx);
      if (original.status === "running") throw failedPrecondition("the run is still running");
      const executed = stepRecordsOf(original);
      const at = executed.findIndex((s) => s.stepId === req.stepId);
      if (at < 0) {
        throw invalidArgument(`the run never executed step "${req.stepId}"`, [
          { field: "stepId", issue: "is not a step this run executed" },
        ]);
      }
      const inputs = req.inputs === undefined ? inputsOf(original) : parseObject(req.inputs, "inputs");
      const agent = await resolveAgent(
        deps,
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
      const start = { id, organizationId: original.organizationId, ...runCallerOf(ctx) };
      return storeRun(
        deps,
        start,
        () =>
          execute(agent, inputs, {
            id,
            createdAt: now(),
            signal: ctx.signal,
            parent: { runId: original._id, stepId: req.stepId, reused },
            trace: ctx.trace,
            keyLimits: start.tokenLimits,
            apiKeyId: start.apiKeyId,
          }),
        ctx.trace,
      );
    },

    async loadInputs(req: { runId: string; versionId: string }, ctx: CallContext) {
      const run = await loadRun(req.runId, "runs:write", ctx);
      const inputs = inputsOf(run);
      const agent = await resolveAgent(
        deps,
        { organizationId: run.organizationId, agentId: run.agentId ?? "", versionId: req.versionId },
        ctx,
      );
      const errors: InputIssue[] = checkInputs(agent, inputs).map((i) => ({
        path: i.field,
        code: inputIssueCode(i.issue),
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
      checkComparedIds(req.runIds);
      const runs: RunDoc[] = [];
      for (const id of req.runIds) runs.push(await loadRun(id, "runs:read", ctx));
      return compareAgentRuns(runs);
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
