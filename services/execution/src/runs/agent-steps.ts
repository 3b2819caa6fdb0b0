/**
 * An agent's steps, run with the same stages as prompt and skill runs: a prompt or skill step
 * stores a child run (stored-runs.ts) and its summary is the step's result; a tool step is one
 * tool call.
 */
import type { FieldIssue } from "@kiln/kit/errors";
import type { RunDoc } from "../store/run-store.js";
import type { ExecutableTool } from "../tools/tool-executor.js";
import { childTraceOf, type RunTraceContext } from "../traces/run-trace-context.js";
import { ZERO_USAGE } from "./agent-record.js";
import type { AgentSkill, RunnableAgent } from "./agent-resolve.js";
import type { StepOutput } from "./bindings.js";
import { type ToolCallRecord, toolCallRecordOf } from "./prompt-execution.js";
import { renamed } from "./run-input.js";
import { type RunnablePrompt, resolveModelFor } from "./runnable.js";
import { type StoredRunDeps, storePromptRun, storeSkillRun } from "./stored-runs.js";
import type { StepResult, WorkflowStep } from "./workflow-engine.js";

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
    ...(run.costNotes?.length ? { costNotes: run.costNotes } : {}),
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

/** A step whose input its schema refuses: failed before it runs, the issues in its message. */
const refusedStep = (code: string, issues: FieldIssue[]): StepResult =>
  failedStep({ code, message: issues.map((i) => `${i.field} ${i.issue}`).join("; ") });

/** Where a step's child run belongs: the agent's organization, its call's signal, trace and API key. */
interface StepContext {
  organizationId: string;
  signal?: AbortSignal;
  trace?: RunTraceContext;
  apiKeyId?: string;
}

async function runPromptStep(
  deps: StoredRunDeps,
  prompt: RunnablePrompt,
  variables: Record<string, unknown>,
  { organizationId, signal, trace, apiKeyId }: StepContext,
): Promise<StepResult> {
  const check = deps.validator.check(prompt.variablesSchema, variables);
  const ids = { promptId: prompt.promptId, promptVersionId: prompt.promptVersionId };
  if (!check.ok) return { ...refusedStep("invalid_variables", renamed(check.issues, "variables")), ...ids };
  const model = await resolveModelFor(deps.models, prompt.model, "model", organizationId);
  const child = await storePromptRun(deps, { organizationId, prompt, model, variables, signal, trace, apiKeyId });
  return stepResultOfRun(child, ids);
}

async function runSkillStep(
  deps: StoredRunDeps,
  skill: AgentSkill,
  input: Record<string, unknown>,
  { organizationId, signal, trace, apiKeyId }: StepContext,
): Promise<StepResult> {
  const check = deps.validator.check(skill.inputSchema, input);
  if (!check.ok) return refusedStep("invalid_input", check.issues);
  const { skillId, skillVersionId, steps } = skill;
  return stepResultOfRun(
    await storeSkillRun(deps, { organizationId, skillId, skillVersionId, steps, input, signal, trace, apiKeyId }),
  );
}

async function runToolStep(
  deps: StoredRunDeps,
  tool: ExecutableTool,
  input: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<StepResult> {
  const executed = await deps.tools.execute(tool, input, { signal });
  const call = toolCallRecordOf(tool.toolKey, tool.toolVersionId, input, executed);
  const base = {
    provider: null,
    model: null,
    usage: { ...ZERO_USAGE },
    estimatedCostUsd: 0,
    latencyMs: call.latencyMs,
    toolCalls: [call],
  };
  if (call.error) return { ...base, status: "failed", output: null, error: call.error };
  // A tool step's result is its output.json (api.md "Runs").
  return { ...base, status: "succeeded", output: { text: JSON.stringify(executed.output), json: executed.output } };
}

/**
 * The workflow engine's step runner for one agent version. With the agent run's trace context, a
 * step's child run is recorded in the agent's trace under the step's span (docs/observability.md);
 * with its API key, a step's child run is the key's (usage by key, key budgets: docs/usage.md).
 */
export const stepRunnerOf =
  (
    deps: StoredRunDeps,
    agent: RunnableAgent,
    call: { signal?: AbortSignal; trace?: RunTraceContext; apiKeyId?: string } = {},
  ) =>
  async (step: WorkflowStep, input: Record<string, unknown>): Promise<StepResult> => {
    const { signal, trace, apiKeyId } = call;
    const context = {
      organizationId: agent.organizationId,
      signal,
      trace: trace && childTraceOf(trace, step.id),
      apiKeyId,
    };
    const prompt = agent.prompts.get(step.id);
    if (prompt) return runPromptStep(deps, prompt, input, context);
    const skill = agent.skills.get(step.id);
    if (skill) return runSkillStep(deps, skill, input, context);
    const tool = agent.tools.get(step.id);
    if (tool) return runToolStep(deps, tool, input, signal);
    return failedStep({ code: "unresolved_step", message: `step "${step.id}" has nothing to run` });
  };
