import { fieldPath, Issues } from "./issues.js";
import { checkJsonSchema, isJsonObject, type JsonObject, type JsonValue, ownValue } from "./json-schema.js";
import { ancestors, backEdges, buildGraph, dominators, transitionPath } from "./workflow-graph.js";
import { BINDING_FORMS, checkCondition, parseWorkflowBinding } from "./workflow-logic.js";
import {
  issue,
  MAX_STEPS_LIMIT,
  type ParsedWorkflow,
  parseWorkflow,
  REF_KEYS,
  type StepType,
  type WorkflowFindings,
  type WorkflowIssue,
  type WorkflowStep,
} from "./workflow-shape.js";

export { CONDITION_OPERATORS, parseWorkflowBinding, type WorkflowBinding } from "./workflow-logic.js";
export * from "./workflow-shape.js";

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
