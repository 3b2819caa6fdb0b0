/**
 * Workflow bindings (`{{inputs.x}}`, `{{steps.<id>.output}}`) and the JSON Logic conditions a
 * transition may carry, with the checks that keep them to known operators and declared names.
 */
import jsonLogic from "json-logic-js";
import { isJsonObject, type JsonValue, ownValue } from "./json-schema.js";
import { issue, type WorkflowIssue } from "./workflow-shape.js";

export type WorkflowBinding =
  | { kind: "input"; field: string; path: string[] }
  | { kind: "step"; stepId: string; path: string[] }
  | { kind: "literal"; value: JsonValue };

const INPUT_BINDING = /^\{\{\s*inputs\.([^.\s{}]+)((?:\.[^.\s{}]+)*)\s*\}\}$/;
const STEP_BINDING = /^\{\{\s*steps\.([A-Za-z_][A-Za-z0-9_]{0,63})\.output((?:\.[^.\s{}]+)*)\s*\}\}$/;
export const BINDING_FORMS =
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
export function checkCondition(
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
