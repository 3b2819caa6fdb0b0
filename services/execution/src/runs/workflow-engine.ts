/**
 * The agent workflow engine (api.md "Agents"): starts at `entry`, binds each step's input from
 * `{{inputs.x}}`, `{{steps.<id>.output[.field]}}` or literals, runs the step through the caller's
 * `StepRunner`, and follows `next` (a step id, or `[{when, to}]` judged with JSON Logic over
 * `{inputs, steps: {<id>: {output}}}`, first match wins, none ends the run). `maxSteps` bounds
 * executions. Pure apart from the step runner: nothing carries over between runs.
 */
import jsonLogic from "json-logic-js";
import type { RunDoc } from "../store/run-store.js";
import { bindingValueOf, resolveBinding, type StepOutput } from "./bindings.js";
import type { ToolCallRecord } from "./prompt-execution.js";

/** Executions when a workflow sets no `maxSteps` (the catalog insists on one for cycles). */
export const DEFAULT_MAX_STEPS = 100;

export type StepType = "prompt" | "skill" | "tool";

export interface WorkflowStep {
  id: string;
  type: StepType;
  ref: Record<string, unknown>;
  input: Record<string, unknown>;
  next?: string | { when: unknown; to: string }[];
}

export interface Workflow {
  inputSchema: unknown;
  entry: string;
  steps: WorkflowStep[];
  output: unknown;
  maxSteps?: number;
}

export interface RunError {
  code: string;
  message: string;
}

/** What running one step gave. */
export interface StepResult {
  status: "succeeded" | "failed";
  output: StepOutput | null;
  /** The child run this step stored (prompt and skill steps). */
  runId?: string;
  promptId?: string;
  promptVersionId?: string;
  provider: string | null;
  model: string | null;
  usage: RunDoc["usage"];
  /** null when a model without a price took part. */
  estimatedCostUsd: number | null;
  /** What the estimate assumed; absent when nothing. */
  costNotes?: RunDoc["costNotes"];
  latencyMs: number;
  toolCalls: ToolCallRecord[];
  error?: RunError;
}

/** One executed (or reused) step of an agent run, as stored in its `steps`. */
export interface AgentStepRecord extends StepResult {
  stepId: string;
  type: StepType;
  input: Record<string, unknown>;
  reused: boolean;
}

export type StepRunner = (step: WorkflowStep, input: Record<string, unknown>) => Promise<StepResult>;

export interface WorkflowResult {
  steps: AgentStepRecord[];
  /** The `output` binding's value as `{text, json?}`; null when the run failed. */
  output: StepOutput | null;
  error: RunError | null;
}

export interface ExecuteWorkflowOptions {
  /** Where to start instead of `entry` (rerun from a step). */
  startAt?: string;
  /** Records reused from an earlier run: their outputs are visible, they count towards `maxSteps`. */
  reused?: AgentStepRecord[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const STEP_TYPES: readonly string[] = ["prompt", "skill", "tool"];

/** The workflow JSON of an agent version; throws (with a reason) when it cannot be run. */
export function parseWorkflow(text: string): Workflow {
  const value: unknown = JSON.parse(text || "{}");
  if (!isObject(value)) throw new Error("the workflow is not an object");
  const { entry, steps, maxSteps } = value;
  if (typeof entry !== "string" || entry === "") throw new Error("the workflow has no entry");
  if (!Array.isArray(steps) || steps.length === 0) throw new Error("the workflow has no steps");
  const parsed: WorkflowStep[] = steps.map((s, i) => {
    if (!isObject(s) || typeof s.id !== "string" || !STEP_TYPES.includes(String(s.type))) {
      throw new Error(`steps[${i}] is malformed`);
    }
    const next = s.next;
    const validNext =
      next === undefined ||
      typeof next === "string" ||
      (Array.isArray(next) && next.every((b) => isObject(b) && typeof b.to === "string"));
    if (!validNext) throw new Error(`steps[${i}].next is malformed`);
    return {
      id: s.id,
      type: s.type as StepType,
      ref: isObject(s.ref) ? s.ref : {},
      input: isObject(s.input) ? s.input : {},
      ...(next === undefined ? {} : { next: next as WorkflowStep["next"] }),
    };
  });
  return {
    inputSchema: value.inputSchema ?? { type: "object" },
    entry,
    steps: parsed,
    output: value.output,
    ...(typeof maxSteps === "number" && Number.isInteger(maxSteps) && maxSteps > 0 ? { maxSteps } : {}),
  };
}

/** One binding's value; `undefined` when what it names does not exist. Anything else is a literal. */
export function resolveAgentBinding(
  binding: unknown,
  inputs: Record<string, unknown>,
  outputs: ReadonlyMap<string, StepOutput>,
): unknown {
  return resolveBinding(binding, inputs, outputs, { root: "inputs", wholeRoot: true });
}

/** A step's input: each bound name resolved; names whose binding resolves to nothing are absent. */
export function bindStepInput(
  bindings: Record<string, unknown>,
  inputs: Record<string, unknown>,
  outputs: ReadonlyMap<string, StepOutput>,
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [name, binding] of Object.entries(bindings)) {
    const value = resolveAgentBinding(binding, inputs, outputs);
    // defineProperty: a "__proto__" name stays plain data.
    if (value !== undefined)
      Object.defineProperty(input, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return input;
}

/** The run's output from the `output` binding: a whole step output is kept as it is. */
export function workflowOutputOf(
  binding: unknown,
  inputs: Record<string, unknown>,
  outputs: ReadonlyMap<string, StepOutput>,
): StepOutput | null {
  if (typeof binding === "string") {
    const whole = /^\{\{\s*steps\.([^\s{}.]+)\.output\s*\}\}$/.exec(binding);
    if (whole?.[1]) return outputs.get(whole[1]) ?? null;
  }
  const value = resolveAgentBinding(binding, inputs, outputs);
  if (value === undefined || value === null) return null;
  return typeof value === "string" ? { text: value } : { text: JSON.stringify(value), json: value };
}

/** The JSON Logic data of conditions: `{inputs, steps: {<id>: {output}}}`. */
function logicDataOf(inputs: Record<string, unknown>, outputs: ReadonlyMap<string, StepOutput>) {
  const steps: Record<string, { output: unknown }> = {};
  for (const [id, output] of outputs) {
    Object.defineProperty(steps, id, {
      value: { output: bindingValueOf(output) },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { inputs, steps };
}

/** The step after `step`: undefined ends the run. Throws when a condition cannot be evaluated. */
export function nextStepOf(
  step: WorkflowStep,
  inputs: Record<string, unknown>,
  outputs: ReadonlyMap<string, StepOutput>,
): string | undefined {
  if (step.next === undefined) return undefined;
  if (typeof step.next === "string") return step.next;
  const data = logicDataOf(inputs, outputs);
  for (const branch of step.next) {
    if (jsonLogic.truthy(jsonLogic.apply(branch.when as jsonLogic.RulesLogic, data))) return branch.to;
  }
  return undefined;
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Runs a workflow to its end, a failed step, or the `maxSteps` bound. Never throws for a step failure. */
export async function executeWorkflow(
  workflow: Workflow,
  inputs: Record<string, unknown>,
  runStep: StepRunner,
  options: ExecuteWorkflowOptions = {},
): Promise<WorkflowResult> {
  const byId = new Map(workflow.steps.map((s) => [s.id, s]));
  const maxSteps = workflow.maxSteps ?? DEFAULT_MAX_STEPS;
  const records: AgentStepRecord[] = [...(options.reused ?? [])];
  const outputs = new Map<string, StepOutput>();
  for (const r of records) if (r.output) outputs.set(r.stepId, r.output);
  const fail = (error: RunError): WorkflowResult => ({ steps: records, output: null, error });

  let currentId: string | undefined = options.startAt ?? workflow.entry;
  while (currentId !== undefined) {
    const step = byId.get(currentId);
    if (!step) return fail({ code: "unknown_step", message: `the workflow has no step "${currentId}"` });
    if (records.length >= maxSteps) {
      return fail({ code: "max_steps", message: `the run exceeded maxSteps (${maxSteps}) step executions` });
    }
    const input = bindStepInput(step.input, inputs, outputs);
    const result = await runStep(step, input);
    records.push({ stepId: step.id, type: step.type, input, reused: false, ...result });
    if (result.status === "failed" || !result.output) {
      return fail(result.error ?? { code: "no_output", message: `step "${step.id}" produced no output` });
    }
    outputs.set(step.id, result.output);
    try {
      currentId = nextStepOf(step, inputs, outputs);
    } catch (e) {
      return fail({ code: "invalid_condition", message: `a condition of step "${step.id}" failed: ${messageOf(e)}` });
    }
  }
  const output = workflowOutputOf(workflow.output, inputs, outputs);
  if (!output) return fail({ code: "no_output", message: "the workflow's output binding resolved to nothing" });
  return { steps: records, output, error: null };
}
