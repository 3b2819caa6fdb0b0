/** The agent run record, built from the workflow's step results, and its steps read back. */
import type { RunDoc } from "../store/run-store.js";
import { runTotalsOf } from "./run-totals.js";
import type { AgentStepRecord, WorkflowResult } from "./workflow-engine.js";

/** No tokens: a step that called no model, or one reused from an earlier run. */
export const ZERO_USAGE = { inputTokens: 0, outputTokens: 0 };

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
    ...(r.costNotes?.length ? { costNotes: r.costNotes } : {}),
    latencyMs: r.latencyMs,
    toolCalls: r.toolCalls,
    error: r.error ?? null,
    reused: r.reused,
  };
}

export function stepRecordsOf(run: RunDoc): AgentStepRecord[] {
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
  /** The label the agent's version was resolved through, when the request named one. */
  label?: string;
}

/**
 * The agent run record (api.md "Runs"): usage, cost and tool calls summed over the steps (a tool
 * step is one call; reused steps cost nothing); provider and model only when every step agrees.
 */
export function agentRunDocOf(r: AgentRunDocInput): RunDoc {
  const steps = r.result.steps;
  const succeeded = r.result.error === null && r.result.output !== null;
  return {
    _id: r.id,
    kind: "agent",
    organizationId: r.organizationId,
    status: succeeded ? "succeeded" : "failed",
    inputJson: JSON.stringify({ inputs: r.inputs }),
    outputJson: succeeded ? JSON.stringify(r.result.output) : null,
    ...runTotalsOf(steps, r.createdAt, r.completedAt),
    stepsJson: JSON.stringify(steps.map(stepJsonOf)),
    error: succeeded ? null : (r.result.error ?? { code: "no_output", message: "the run produced no output" }),
    promptId: "",
    promptVersionId: "",
    skillId: "",
    skillVersionId: "",
    agentId: r.agentId,
    agentVersionId: r.agentVersionId,
    ...(r.parentRunId ? { parentRunId: r.parentRunId, rerunFromStepId: r.rerunFromStepId ?? "" } : {}),
    ...(r.label ? { label: r.label } : {}),
    createdAt: r.createdAt,
    completedAt: r.completedAt,
  };
}

/** An asynchronous run that ended without a result of its own (a shutdown, an unexpected error). */
export const failedRun = (running: RunDoc, error: RunDoc["error"], completedAt: Date): RunDoc => ({
  ...running,
  status: "failed",
  error,
  completedAt,
});

/** A synchronous run whose caller went away (an MCP client's cancellation, a closed connection). */
export const cancelledRun = (run: RunDoc, completedAt: Date): RunDoc => ({
  ...run,
  status: "cancelled",
  error: { code: "cancelled", message: "the caller cancelled the run before it finished" },
  completedAt,
});

/** Why a run a shutdown cut short failed: something the caller can act on. */
export const INTERRUPTED = {
  code: "unavailable",
  message: "the execution service shut down before the run finished; run it again",
};
