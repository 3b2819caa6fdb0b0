import { fieldPath } from "./issues.js";
import { isJsonObject, type JsonObject, type JsonValue, ownValue } from "./json-schema.js";
import { ALIAS_PATTERN } from "./skill-composition.js";

export type StepType = "prompt" | "skill" | "tool";
export const STEP_TYPES: readonly StepType[] = ["prompt", "skill", "tool"];

/** The id and the optional version key of each step type's `ref`. */
export const REF_KEYS = {
  prompt: { id: "promptId", version: "promptVersionId" },
  skill: { id: "skillId", version: "skillVersionId" },
  tool: { id: "toolId", version: "toolVersionId" },
} as const satisfies Record<StepType, { id: string; version: string }>;

export const MAX_WORKFLOW_STEPS = 100;
export const MAX_CONDITIONS = 20;
/** `maxSteps` bounds how many steps one run executes (loops need it). */
export const MAX_STEPS_LIMIT = 1_000;

export interface WorkflowIssue {
  /** Into the workflow, e.g. `steps[1].input.city`; "" for the workflow itself. */
  path: string;
  code: WorkflowIssueCode;
  message: string;
}

export type WorkflowIssueCode =
  | "malformed"
  | "required"
  | "duplicate_step_id"
  | "unknown_step"
  | "unreachable_step"
  | "unbounded_cycle"
  | "invalid_binding"
  | "unknown_input"
  | "step_not_before"
  | "step_may_not_have_run"
  | "invalid_condition"
  | "invalid_input_schema"
  | "unknown_reference"
  | "unpublished_reference";

export interface WorkflowRef {
  /** The prompt, skill or tool id. */
  id: string;
  /** The pinned version, when given. */
  versionId?: string;
}

export interface WorkflowCondition {
  when: JsonValue;
  to: string;
}

export interface WorkflowStep {
  /** Position in `steps`, for paths. */
  index: number;
  id: string;
  type: StepType;
  ref: WorkflowRef;
  input: JsonObject;
  next?: string | WorkflowCondition[];
}

/** A workflow as far as its shape could be read; `steps` holds the well-formed ones. */
export interface ParsedWorkflow {
  inputSchema?: JsonObject;
  entry?: string;
  steps: WorkflowStep[];
  output?: string;
  maxSteps?: number;
}

export interface WorkflowFindings {
  errors: WorkflowIssue[];
  warnings: WorkflowIssue[];
}

const TOP_LEVEL_KEYS = new Set(["inputSchema", "entry", "steps", "output", "maxSteps"]);
const STEP_KEYS = new Set(["id", "type", "ref", "input", "next"]);

export const issue = (path: string, code: WorkflowIssueCode, message: string): WorkflowIssue => ({
  path,
  code,
  message,
});

/**
 * Reads the shape (types, required and unknown fields). Malformed parts are reported with code
 * `malformed` or `required` and left out of what is returned, so the other checks still run on
 * the rest. Saving refuses a workflow with any of these (400).
 */
export function parseWorkflow(value: unknown): { workflow: ParsedWorkflow; issues: WorkflowIssue[] } {
  const issues: WorkflowIssue[] = [];
  const workflow: ParsedWorkflow = { steps: [] };
  if (!isJsonObject(value)) {
    issues.push(issue("", "malformed", "must be an object {inputSchema, entry, steps, output, maxSteps?}"));
    return { workflow, issues };
  }
  for (const key of Object.keys(value)) {
    if (!TOP_LEVEL_KEYS.has(key)) issues.push(issue(key, "malformed", "is not a workflow field"));
  }
  const inputSchema = ownValue(value, "inputSchema");
  if (inputSchema === undefined) issues.push(issue("inputSchema", "required", "is required"));
  else if (!isJsonObject(inputSchema)) issues.push(issue("inputSchema", "malformed", "must be a JSON Schema object"));
  else workflow.inputSchema = inputSchema;

  for (const key of ["entry", "output"] as const) {
    const v = ownValue(value, key);
    if (v === undefined) issues.push(issue(key, "required", "is required"));
    else if (typeof v !== "string" || v === "") issues.push(issue(key, "malformed", "must be a non-empty string"));
    else workflow[key] = v;
  }

  const maxSteps = ownValue(value, "maxSteps");
  if (maxSteps !== undefined) {
    if (typeof maxSteps !== "number" || !Number.isInteger(maxSteps) || maxSteps < 1 || maxSteps > MAX_STEPS_LIMIT) {
      issues.push(issue("maxSteps", "malformed", `must be an integer from 1 to ${MAX_STEPS_LIMIT}`));
    } else workflow.maxSteps = maxSteps;
  }

  const steps = ownValue(value, "steps");
  if (steps === undefined) issues.push(issue("steps", "required", "is required"));
  else if (!Array.isArray(steps)) issues.push(issue("steps", "malformed", "must be an array of steps"));
  else {
    if (steps.length === 0) issues.push(issue("steps", "required", "must hold at least one step"));
    if (steps.length > MAX_WORKFLOW_STEPS) {
      issues.push(issue("steps", "malformed", `must hold at most ${MAX_WORKFLOW_STEPS} steps`));
    }
    steps.slice(0, MAX_WORKFLOW_STEPS).forEach((s, i) => {
      const step = parseStep(s, i, issues);
      if (step) workflow.steps.push(step);
    });
  }
  return { workflow, issues };
}

function parseStep(value: JsonValue, index: number, issues: WorkflowIssue[]): WorkflowStep | undefined {
  const at = fieldPath("steps", index);
  if (!isJsonObject(value)) {
    issues.push(issue(at, "malformed", "must be an object {id, type, ref, input?, next?}"));
    return undefined;
  }
  const before = issues.length;
  for (const key of Object.keys(value)) {
    if (!STEP_KEYS.has(key)) issues.push(issue(fieldPath(at, key), "malformed", "is not a step field"));
  }
  const id = ownValue(value, "id");
  if (id === undefined) issues.push(issue(fieldPath(at, "id"), "required", "is required"));
  else if (typeof id !== "string" || !ALIAS_PATTERN.test(id)) {
    issues.push(
      issue(fieldPath(at, "id"), "malformed", "must start with a letter or _ and hold at most 64 letters, digits or _"),
    );
  }
  const type = ownValue(value, "type");
  if (type === undefined) issues.push(issue(fieldPath(at, "type"), "required", "is required"));
  else if (!STEP_TYPES.includes(type as StepType)) {
    issues.push(issue(fieldPath(at, "type"), "malformed", 'must be "prompt", "skill" or "tool"'));
  }
  const ref = parseRef(ownValue(value, "ref"), fieldPath(at, "ref"), type as StepType, issues);

  const input = ownValue(value, "input") ?? {};
  if (!isJsonObject(input)) {
    issues.push(issue(fieldPath(at, "input"), "malformed", "must be an object of names to bindings"));
  }
  const next = parseNext(ownValue(value, "next"), fieldPath(at, "next"), issues);
  if (issues.length > before || typeof id !== "string" || !ref || !isJsonObject(input)) return undefined;
  return {
    index,
    id,
    type: type as StepType,
    ref,
    input,
    ...(next !== undefined && { next }),
  };
}

function parseRef(value: JsonValue | undefined, at: string, type: StepType, issues: WorkflowIssue[]) {
  if (value === undefined) {
    issues.push(issue(at, "required", "is required"));
    return undefined;
  }
  if (!isJsonObject(value)) {
    issues.push(issue(at, "malformed", "must be an object such as {promptId, promptVersionId?}"));
    return undefined;
  }
  const keys = REF_KEYS[type];
  if (!keys) return undefined; // the type was reported
  let ok = true;
  for (const key of Object.keys(value)) {
    if (key !== keys.id && key !== keys.version) {
      issues.push(issue(fieldPath(at, key), "malformed", `is not a field of a ${type} step's ref`));
      ok = false;
    }
  }
  const id = ownValue(value, keys.id);
  const versionId = ownValue(value, keys.version);
  if (id === undefined) {
    issues.push(issue(fieldPath(at, keys.id), "required", "is required"));
    ok = false;
  } else if (typeof id !== "string" || id === "") {
    issues.push(issue(fieldPath(at, keys.id), "malformed", "must be a non-empty string"));
    ok = false;
  }
  if (versionId !== undefined && (typeof versionId !== "string" || versionId === "")) {
    issues.push(issue(fieldPath(at, keys.version), "malformed", "must be a non-empty string"));
    ok = false;
  }
  if (!ok) return undefined;
  return { id: id as string, ...(versionId !== undefined && { versionId: versionId as string }) };
}

function parseNext(
  value: JsonValue | undefined,
  at: string,
  issues: WorkflowIssue[],
): string | WorkflowCondition[] | undefined {
  if (value === undefined || typeof value === "string") {
    if (value === "") issues.push(issue(at, "malformed", "must name a step"));
    return value;
  }
  if (!Array.isArray(value)) {
    issues.push(issue(at, "malformed", "must be a step id or an array of {when, to}"));
    return undefined;
  }
  if (value.length > MAX_CONDITIONS)
    issues.push(issue(at, "malformed", `must hold at most ${MAX_CONDITIONS} branches`));
  const conditions: WorkflowCondition[] = [];
  value.forEach((c, k) => {
    const cAt = fieldPath(at, k);
    if (!isJsonObject(c)) {
      issues.push(issue(cAt, "malformed", "must be an object {when, to}"));
      return;
    }
    for (const key of Object.keys(c)) {
      if (key !== "when" && key !== "to") issues.push(issue(fieldPath(cAt, key), "malformed", "is not a branch field"));
    }
    const when = ownValue(c, "when");
    const to = ownValue(c, "to");
    if (when === undefined) issues.push(issue(fieldPath(cAt, "when"), "required", "is required"));
    if (to === undefined) issues.push(issue(fieldPath(cAt, "to"), "required", "is required"));
    else if (typeof to !== "string" || to === "") {
      issues.push(issue(fieldPath(cAt, "to"), "malformed", "must name a step"));
    }
    if (when !== undefined && typeof to === "string" && to !== "") conditions.push({ when, to });
  });
  return conditions;
}
