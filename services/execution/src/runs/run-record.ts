/** The run record of prompt, skill and judge runs, built from their executions. */
import type { RunCacheDoc, RunDoc } from "../store/run-store.js";
import type { PromptExecution } from "./prompt-execution.js";
import { runTotalsOf } from "./run-totals.js";
import type { StepRecord } from "./skill-steps.js";

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
  /** The label the version was resolved through, when the request named one. */
  label?: string;
  /** The evaluation run the run was made for, when an evaluation made it. */
  evaluationRunId?: string;
  /** A prompt run: its one execution. */
  single?: PromptExecution;
  /** What the response cache did for the run, when it used it. */
  cache?: RunCacheDoc;
}

/**
 * The run record (api.md "Runs"): multi-step runs sum usage, cost and tool calls over their steps;
 * provider and model are set when every step agrees; the cost is null when any part has no price.
 */
export function runDocOf(r: RunDocInput): RunDoc {
  const executions = r.single ? [r.single] : r.steps.map((s) => s.execution);
  const last = executions.at(-1);
  const failed = executions.find((e) => e.status === "failed");
  const succeeded = !failed && last?.status === "succeeded" && last.output !== null;
  return {
    _id: r.id,
    kind: r.kind,
    organizationId: r.organizationId,
    status: succeeded ? "succeeded" : "failed",
    inputJson: JSON.stringify(r.input),
    // A cancelled stream keeps what the model had sent.
    outputJson: last?.output && (succeeded || last.error?.code === "cancelled") ? JSON.stringify(last.output) : null,
    ...runTotalsOf(executions, r.createdAt, r.completedAt),
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
        ...(s.execution.costNotes?.length ? { costNotes: s.execution.costNotes } : {}),
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
    ...(r.label ? { label: r.label } : {}),
    ...(r.evaluationRunId ? { evaluationRunId: r.evaluationRunId } : {}),
    ...(r.cache ? { cache: r.cache } : {}),
    ...routeFieldsOf(executions),
    createdAt: r.createdAt,
    completedAt: r.completedAt,
  };
}

/** A run whose model was a route: the route's name (the first one, when steps used several) and every attempt in order. */
function routeFieldsOf(executions: PromptExecution[]): Pick<RunDoc, "route" | "attempts"> {
  const routed = executions.flatMap((e) => (e.routed ? [e.routed] : []));
  const first = routed[0];
  return first ? { route: first.route, attempts: routed.flatMap((r) => r.attempts) } : {};
}
