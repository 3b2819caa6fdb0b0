/**
 * Agent workflows (api.md "Agents"): the configuration of one agent version, never a resource of
 * its own. Pure: the shape, the step graph, bindings, JSON Logic conditions and the input schema.
 * References to prompts, skills and tools are looked up by the use case (agents.ts), which adds
 * its findings to the ones made here.
 *
 *   { inputSchema, entry, steps: [{ id, type, ref, input?, next? }], output, maxSteps? }
 *
 * Every finding has a path into the workflow in api.md's field notation (`steps[1].input.city`),
 * a stable code and a message. Errors make a workflow invalid (it cannot be published); warnings
 * do not.
 */
import jsonLogic from "json-logic-js";
import { fieldPath, Issues } from "./issues.js";
import { checkJsonSchema, isJsonObject, type JsonObject, type JsonValue, ownValue } from "./json-schema.js";
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

const issue = (path: string, code: WorkflowIssueCode, message: string): WorkflowIssue => ({ path, code, message });

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

// ---------------------------------------------------------------------------------------------
// Bindings

export type WorkflowBinding =
  | { kind: "input"; field: string; path: string[] }
  | { kind: "step"; stepId: string; path: string[] }
  | { kind: "literal"; value: JsonValue };

const INPUT_BINDING = /^\{\{\s*inputs\.([^.\s{}]+)((?:\.[^.\s{}]+)*)\s*\}\}$/;
const STEP_BINDING = /^\{\{\s*steps\.([A-Za-z_][A-Za-z0-9_]{0,63})\.output((?:\.[^.\s{}]+)*)\s*\}\}$/;
const BINDING_FORMS =
  'must be "{{inputs.<field>}}", "{{steps.<id>.output}}", "{{steps.<id>.output.<field>}}" or a literal';

const segments = (rest: string | undefined) => (rest ?? "").split(".").filter((s) => s !== "");

/**
 * `"{{inputs.x}}"` (also `"{{inputs.x.y}}"`), `"{{steps.<id>.output}}"`,
 * `"{{steps.<id>.output.field…}}"` or a literal. A string with `{{` that is none of these is
 * refused rather than taken as literal text (a typo must not silently become text).
 */
export function parseWorkflowBinding(value: JsonValue): WorkflowBinding | { kind: "invalid" } {
  if (typeof value !== "string" || !value.includes("{{")) return { kind: "literal", value };
  const input = INPUT_BINDING.exec(value);
  if (input?.[1]) return { kind: "input", field: input[1], path: segments(input[2]) };
  const step = STEP_BINDING.exec(value);
  if (step?.[1]) return { kind: "step", stepId: step[1], path: segments(step[2]) };
  return { kind: "invalid" };
}

// ---------------------------------------------------------------------------------------------
// JSON Logic conditions

/**
 * The operators of json-logic-js a condition may use. Left out: `method` (calls methods of
 * values: not data logic) and `log` (writes to the console).
 */
export const CONDITION_OPERATORS = new Set([
  "var",
  "missing",
  "missing_some",
  "if",
  "?:",
  "==",
  "===",
  "!=",
  "!==",
  "!",
  "!!",
  "or",
  "and",
  ">",
  ">=",
  "<",
  "<=",
  "max",
  "min",
  "+",
  "-",
  "*",
  "/",
  "%",
  "map",
  "filter",
  "reduce",
  "all",
  "none",
  "some",
  "merge",
  "in",
  "cat",
  "substr",
]);
/** Operators whose later arguments see each array item, not `{inputs, steps}`. */
const ITEM_SCOPED = new Set(["map", "filter", "reduce", "all", "none", "some"]);

/**
 * Checks a condition: only known operators, one operator per operation object, and every `var`
 * over `{inputs, steps}` naming a declared input or an existing step. `onStepVar` judges when the
 * step can have run.
 */
function checkCondition(
  rule: JsonValue,
  at: string,
  out: WorkflowIssue[],
  vars: (path: string, at: string) => void,
  itemScoped = false,
): void {
  if (Array.isArray(rule)) {
    for (const r of rule) checkCondition(r, at, out, vars, itemScoped);
    return;
  }
  if (!isJsonObject(rule)) return;
  const keys = Object.keys(rule);
  if (keys.length !== 1 || !jsonLogic.is_logic(rule)) {
    out.push(issue(at, "invalid_condition", "an operation must be an object with exactly one operator"));
    return;
  }
  const op = jsonLogic.get_operator(rule);
  if (!CONDITION_OPERATORS.has(op)) {
    out.push(issue(at, "invalid_condition", `"${op}" is not a supported JSON Logic operator`));
    return;
  }
  const args = ownValue(rule, op) ?? null;
  const list = Array.isArray(args) ? args : [args];
  if (op === "var" && !itemScoped) {
    const name = list[0];
    if (typeof name === "string" || typeof name === "number") vars(String(name), at);
    else checkCondition(name ?? null, at, out, vars, itemScoped);
    for (const r of list.slice(1)) checkCondition(r, at, out, vars, itemScoped);
    return;
  }
  list.forEach((r, i) => {
    checkCondition(r, at, out, vars, itemScoped || (ITEM_SCOPED.has(op) && i > 0));
  });
}

// ---------------------------------------------------------------------------------------------
// The step graph

interface Graph {
  byId: Map<string, WorkflowStep>;
  successors: Map<string, string[]>;
  predecessors: Map<string, string[]>;
  reachable: Set<string>;
}

function targetsOf(step: WorkflowStep): string[] {
  if (step.next === undefined) return [];
  if (typeof step.next === "string") return [step.next];
  return step.next.map((c) => c.to);
}

function buildGraph(steps: readonly WorkflowStep[], entry: string | undefined): Graph {
  const byId = new Map<string, WorkflowStep>();
  for (const s of steps) if (!byId.has(s.id)) byId.set(s.id, s);
  const successors = new Map<string, string[]>();
  const predecessors = new Map<string, string[]>([...byId.keys()].map((id) => [id, []]));
  for (const [id, s] of byId) {
    const targets = [...new Set(targetsOf(s).filter((t) => byId.has(t)))];
    successors.set(id, targets);
    for (const t of targets) predecessors.get(t)?.push(id);
  }
  const reachable = new Set<string>();
  if (entry !== undefined && byId.has(entry)) {
    const queue = [entry];
    reachable.add(entry);
    while (queue.length > 0) {
      const id = queue.shift() as string;
      for (const t of successors.get(id) ?? []) {
        if (!reachable.has(t)) {
          reachable.add(t);
          queue.push(t);
        }
      }
    }
  }
  return { byId, successors, predecessors, reachable };
}

/** For each reachable step, the steps on every path from the entry to it (itself included). */
function dominators(graph: Graph, entry: string): Map<string, Set<string>> {
  const nodes = [...graph.reachable];
  const dom = new Map<string, Set<string>>();
  for (const n of nodes) dom.set(n, n === entry ? new Set([entry]) : new Set(nodes));
  let changed = true;
  while (changed) {
    changed = false;
    for (const n of nodes) {
      if (n === entry) continue;
      const preds = (graph.predecessors.get(n) ?? []).filter((p) => graph.reachable.has(p));
      let meet: Set<string> | undefined;
      for (const p of preds) {
        const d = dom.get(p) as Set<string>;
        meet = meet ? new Set([...meet].filter((x) => d.has(x))) : new Set(d);
      }
      const next = new Set(meet ?? []);
      next.add(n);
      const current = dom.get(n) as Set<string>;
      if (next.size !== current.size || [...next].some((x) => !current.has(x))) {
        dom.set(n, next);
        changed = true;
      }
    }
  }
  return dom;
}

/** Steps from which a path of at least one transition leads to `target`. */
function ancestors(graph: Graph, target: string): Set<string> {
  const seen = new Set<string>();
  const queue = [...(graph.predecessors.get(target) ?? [])];
  while (queue.length > 0) {
    const id = queue.shift() as string;
    if (seen.has(id)) continue;
    seen.add(id);
    queue.push(...(graph.predecessors.get(id) ?? []));
  }
  return seen;
}

/** The transitions that close a cycle (back edges of a depth-first walk over every step). */
function backEdges(graph: Graph, order: readonly string[]): { from: string; to: string }[] {
  const state = new Map<string, "open" | "done">();
  const found: { from: string; to: string }[] = [];
  const visit = (id: string) => {
    state.set(id, "open");
    for (const t of graph.successors.get(id) ?? []) {
      const s = state.get(t);
      if (s === "open") found.push({ from: id, to: t });
      else if (s === undefined) visit(t);
    }
    state.set(id, "done");
  };
  for (const id of order) if (!state.has(id)) visit(id);
  return found;
}

function transitionPath(step: WorkflowStep, to: string): string {
  const at = fieldPath(fieldPath("steps", step.index), "next");
  if (typeof step.next === "string") return at;
  const k = step.next?.findIndex((c) => c.to === to) ?? -1;
  return k >= 0 ? fieldPath(fieldPath(at, k), "to") : at;
}

// ---------------------------------------------------------------------------------------------
// Checks

/**
 * Every finding about a workflow except its references (agents.ts looks those up): its shape,
 * duplicate ids, unknown entry and transitions, unreachable steps (a warning: they never run),
 * cycles without `maxSteps`, the input schema, bindings and conditions.
 */
export function checkWorkflow(value: unknown): WorkflowFindings & { workflow: ParsedWorkflow } {
  const { workflow, issues: shape } = parseWorkflow(value);
  const errors: WorkflowIssue[] = [...shape];
  const warnings: WorkflowIssue[] = [];
  if (!isJsonObject(value)) return { workflow, errors, warnings };

  // The input schema: a JSON Schema 2020-12 of type object.
  let declaredInputs: Set<string> | undefined;
  if (workflow.inputSchema) {
    const schemaIssues = new Issues();
    if (checkJsonSchema(schemaIssues, "inputSchema", workflow.inputSchema, { objectType: true })) {
      const properties = ownValue(workflow.inputSchema, "properties");
      declaredInputs = new Set(isJsonObject(properties) ? Object.keys(properties) : []);
    }
    for (const i of schemaIssues.all()) errors.push(issue(i.field, "invalid_input_schema", i.issue));
  }

  // Duplicate ids: the first one counts.
  const firstIndex = new Map<string, number>();
  for (const s of workflow.steps) {
    const first = firstIndex.get(s.id);
    if (first === undefined) firstIndex.set(s.id, s.index);
    else {
      errors.push(
        issue(
          fieldPath(fieldPath("steps", s.index), "id"),
          "duplicate_step_id",
          `"${s.id}" is already the id of steps[${first}]`,
        ),
      );
    }
  }
  const unique = workflow.steps.filter((s) => firstIndex.get(s.id) === s.index);
  const graph = buildGraph(unique, workflow.entry);
  const known = (id: string) => graph.byId.has(id);

  if (workflow.entry !== undefined && !known(workflow.entry)) {
    errors.push(issue("entry", "unknown_step", `no step has the id "${workflow.entry}"`));
  }
  for (const s of unique) {
    const at = fieldPath(fieldPath("steps", s.index), "next");
    if (typeof s.next === "string" && !known(s.next)) {
      errors.push(issue(at, "unknown_step", `no step has the id "${s.next}"`));
    } else if (Array.isArray(s.next)) {
      s.next.forEach((c, k) => {
        if (!known(c.to))
          errors.push(issue(fieldPath(fieldPath(at, k), "to"), "unknown_step", `no step has the id "${c.to}"`));
      });
    }
  }
  if (workflow.entry !== undefined && known(workflow.entry)) {
    for (const s of unique) {
      if (!graph.reachable.has(s.id)) {
        warnings.push(
          issue(
            fieldPath("steps", s.index),
            "unreachable_step",
            `step "${s.id}" can never run: no path leads to it from the entry`,
          ),
        );
      }
    }
  }

  // Loops need a bound.
  if (workflow.maxSteps === undefined && ownValue(value, "maxSteps") === undefined) {
    const order = [
      ...(workflow.entry !== undefined && known(workflow.entry) ? [workflow.entry] : []),
      ...graph.byId.keys(),
    ];
    for (const edge of backEdges(graph, order)) {
      const from = graph.byId.get(edge.from) as WorkflowStep;
      errors.push(
        issue(
          transitionPath(from, edge.to),
          "unbounded_cycle",
          `the transition from "${edge.from}" to "${edge.to}" closes a loop; loops need maxSteps (1–${MAX_STEPS_LIMIT})`,
        ),
      );
    }
  }

  const entryKnown = workflow.entry !== undefined && known(workflow.entry);
  const dom = entryKnown ? dominators(graph, workflow.entry as string) : new Map<string, Set<string>>();

  /** Can `source`'s output be read when `reader` runs (or, `inclusive`, right after it ran)? */
  const judgeStepRead = (source: string, reader: WorkflowStep, at: string, inclusive: boolean) => {
    if (!known(source)) {
      errors.push(issue(at, "unknown_step", `no step has the id "${source}"`));
      return;
    }
    if (!entryKnown || !graph.reachable.has(reader.id)) return; // nothing to judge against
    if ((inclusive || source !== reader.id) && dom.get(reader.id)?.has(source)) return;
    if (ancestors(graph, reader.id).has(source) || (inclusive && source === reader.id)) {
      warnings.push(
        issue(at, "step_may_not_have_run", `step "${source}" does not run on every path before step "${reader.id}"`),
      );
    } else {
      errors.push(issue(at, "step_not_before", `step "${source}" cannot have run before step "${reader.id}"`));
    }
  };
  const judgeInput = (field: string, at: string) => {
    if (declaredInputs && !declaredInputs.has(field)) {
      errors.push(issue(at, "unknown_input", `"${field}" is not a property of inputSchema`));
    }
  };

  for (const s of unique) {
    const base = fieldPath(fieldPath("steps", s.index), "input");
    for (const [name, raw] of Object.entries(s.input)) {
      const at = fieldPath(base, name);
      const b = parseWorkflowBinding(raw);
      if (b.kind === "invalid") errors.push(issue(at, "invalid_binding", BINDING_FORMS));
      else if (b.kind === "input") judgeInput(b.field, at);
      else if (b.kind === "step") judgeStepRead(b.stepId, s, at, false);
    }
    if (Array.isArray(s.next)) {
      s.next.forEach((c, k) => {
        const at = fieldPath(fieldPath(fieldPath(fieldPath("steps", s.index), "next"), k), "when");
        checkCondition(c.when, at, errors, (path, varAt) => {
          const [root, name, third] = path.split(".");
          if (path === "" || path === "inputs" || path === "steps") return;
          if (root === "inputs" && name) judgeInput(name, varAt);
          else if (root === "steps" && name) {
            judgeStepRead(name, s, varAt, true);
            if (third !== undefined && third !== "output") {
              errors.push(issue(varAt, "invalid_condition", `"${path}": a step is read as steps.<id>.output`));
            }
          } else {
            errors.push(
              issue(varAt, "invalid_condition", `"${path}": conditions read inputs.<field> and steps.<id>.output`),
            );
          }
        });
      });
    }
  }

  if (workflow.output !== undefined) {
    const b = parseWorkflowBinding(workflow.output);
    if (b.kind === "invalid" || b.kind === "literal") {
      errors.push(
        issue("output", "invalid_binding", 'must be "{{steps.<id>.output}}" or "{{steps.<id>.output.<field>}}"'),
      );
    } else if (b.kind === "input") judgeInput(b.field, "output");
    else if (!known(b.stepId)) errors.push(issue("output", "unknown_step", `no step has the id "${b.stepId}"`));
    else if (entryKnown && graph.reachable.has(b.stepId)) {
      // A run ends after a step without `next` or whose conditions all fail (`when: true` never does).
      const canEnd = (s: WorkflowStep | undefined) =>
        s !== undefined && typeof s.next !== "string" && !(s.next ?? []).some((c) => c.when === true);
      const ends = [...graph.reachable].filter((id) => canEnd(graph.byId.get(id)));
      if (ends.some((id) => !dom.get(id)?.has(b.stepId))) {
        warnings.push(
          issue(
            "output",
            "step_may_not_have_run",
            `step "${b.stepId}" does not run on every path; the output may be null`,
          ),
        );
      }
    } else if (entryKnown) {
      errors.push(issue("output", "step_not_before", `step "${b.stepId}" can never run`));
    }
  }

  return { workflow, errors: sortIssues(errors), warnings: sortIssues(warnings) };
}

/** By path, numbers in paths compared as numbers. */
export function sortIssues(list: WorkflowIssue[]): WorkflowIssue[] {
  return list.sort((a, b) => a.path.localeCompare(b.path, "en", { numeric: true }) || a.code.localeCompare(b.code));
}

/**
 * The workflow with every reference pinned: `pins` gives, by step index, the version id to add
 * to a ref without one. The version key is placed right after the id key; nothing else changes.
 */
export function pinWorkflow(value: JsonObject, pins: ReadonlyMap<number, string>): JsonObject {
  const steps = ownValue(value, "steps");
  if (!Array.isArray(steps) || pins.size === 0) return value;
  const pinned = steps.map((s, i) => {
    const versionId = pins.get(i);
    if (versionId === undefined || !isJsonObject(s)) return s;
    const type = ownValue(s, "type") as StepType;
    const ref = ownValue(s, "ref");
    if (!isJsonObject(ref) || !REF_KEYS[type]) return s;
    const keys = REF_KEYS[type];
    const newRef: JsonObject = {};
    for (const [k, v] of Object.entries(ref)) {
      newRef[k] = v;
      if (k === keys.id) newRef[keys.version] = versionId;
    }
    return replaceKey(s, "ref", newRef);
  });
  return replaceKey(value, "steps", pinned);
}

/** A copy of `object` with `key`'s value replaced, key order kept (own keys, `__proto__` included). */
function replaceKey(object: JsonObject, key: string, value: JsonValue): JsonObject {
  const copy: JsonObject = {};
  for (const [k, v] of Object.entries(object)) {
    Object.defineProperty(copy, k, {
      value: k === key ? value : v,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}
