/** A skill's composition run step by step (skill runs, previews and agent skill steps alike). */
import type { ProviderRegistry } from "@kiln/models/registry";
import type { InputValidator } from "../tools/input-validator.js";
import type { ToolExecutor } from "../tools/tool-executor.js";
import { bindVariables, type StepOutput } from "./bindings.js";
import { executePrompt, failedBeforeAnswer, type PromptExecution } from "./prompt-execution.js";
import { renamed } from "./run-input.js";
import { declaredVariables, resolveModelFor, type SkillStep } from "./runnable.js";

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

/** What running prompts needs: the models, the tools, the variables' validator and the loop's bound. */
export interface ExecutionDeps {
  models: ProviderRegistry;
  tools: ToolExecutor;
  validator: InputValidator;
  /** Model turns that may call tools before the run is failed. */
  maxToolRounds: number;
}

/** One step: its variables bound and checked, then executed (a mismatch fails the step, no model call). */
async function executeSkillStep(
  deps: ExecutionDeps,
  step: SkillStep,
  input: Record<string, unknown>,
  outputs: Map<string, StepOutput>,
  signal?: AbortSignal,
): Promise<StepRecord> {
  const variables = bindVariables(declaredVariables(step.prompt), step.variables, input, outputs);
  const model = await resolveModelFor(
    deps.models,
    step.prompt.model,
    `steps.${step.alias}.model`,
    step.prompt.organizationId,
  );
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
  return {
    stepId: step.alias,
    type: "prompt",
    status: execution.status,
    input: variables,
    output: execution.output,
    promptId: step.prompt.promptId,
    promptVersionId: step.prompt.promptVersionId,
    execution,
  };
}

/** Runs the steps in order; each sees the input and earlier outputs. Stops at the first failed step. */
export async function executeSkillSteps(
  deps: ExecutionDeps,
  steps: SkillStep[],
  input: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<StepRecord[]> {
  const outputs = new Map<string, StepOutput>();
  const records: StepRecord[] = [];
  for (const step of steps) {
    const record = await executeSkillStep(deps, step, input, outputs, signal);
    records.push(record);
    if (record.execution.status === "failed" || !record.execution.output) break;
    outputs.set(step.alias, record.execution.output);
  }
  return records;
}
