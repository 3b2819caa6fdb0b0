/**
 * A step's conditional branches (`next: [{when, to}]`, docs/concepts.md "Agent") as the builder's
 * forms edit them: tried in order, the first whose JSON Logic condition holds names the next step;
 * none holding ends the run. A branch is a comparison of a value the run knows (a workflow input or
 * a step's output, at a path) with a fixed value; `{when: true}` last is "otherwise"; any other
 * condition is kept and edited as JSON.
 */
import type { Workflow } from "@kiln/sdk";
import { inputNames, type Step, updateStep } from "./workflow-model.js";

export type Branch = { when: unknown; to: string };

export const OPERATORS = [
  ["==", "equals"],
  ["!=", "does not equal"],
  [">", "is greater than"],
  [">=", "is at least"],
  ["<", "is less than"],
  ["<=", "is at most"],
] as const;
export type Operator = (typeof OPERATORS)[number][0];

/** A branch as its form shows it. */
export type BranchForm =
  | { kind: "compare"; variable: string; operator: Operator; value: string; to: string }
  | { kind: "otherwise"; to: string }
  | { kind: "json"; when: unknown; to: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isScalar = (v: unknown) => v === null || ["string", "number", "boolean"].includes(typeof v);

/** A fixed value as typed: JSON for numbers, true/false/null and "quoted" text; anything else is text. */
export function fixedValueOf(text: string): unknown {
  try {
    const v = JSON.parse(text) as unknown;
    if (isScalar(v)) return v;
  } catch {
    // plain text
  }
  return text;
}

/** How a fixed value is typed back: text as it is, unless it would read as JSON (then quoted). */
export function textOf(value: unknown): string {
  if (typeof value === "string") return fixedValueOf(value) === value ? value : JSON.stringify(value);
  return JSON.stringify(value);
}

export function branchFormOf(b: Branch): BranchForm {
  if (b.when === true) return { kind: "otherwise", to: b.to };
  if (isObject(b.when)) {
    const [op, args] = Object.entries(b.when)[0] ?? [];
    const known = OPERATORS.find(([o]) => o === op)?.[0];
    if (known && Object.keys(b.when).length === 1 && Array.isArray(args) && args.length === 2) {
      const [left, right] = args;
      const name = isObject(left) && Object.keys(left).length === 1 ? left.var : undefined;
      if (typeof name === "string" && isScalar(right)) {
        return { kind: "compare", variable: name, operator: known, value: textOf(right), to: b.to };
      }
    }
  }
  return { kind: "json", when: b.when, to: b.to };
}

export function branchOf(f: BranchForm): Branch {
  if (f.kind === "otherwise") return { when: true, to: f.to };
  if (f.kind === "json") return { when: f.when, to: f.to };
  return { when: { [f.operator]: [{ var: f.variable }, fixedValueOf(f.value)] }, to: f.to };
}

/** The values a condition can read (`{inputs, steps}`): each workflow input, each step's output (its own first). */
export function variablesOf(w: Workflow, index: number): string[] {
  const own = w.steps[index];
  return [
    ...(own ? [`steps.${own.id}.output`] : []),
    ...inputNames(w).map((n) => `inputs.${n}`),
    ...w.steps.filter((_, i) => i !== index).map((s) => `steps.${s.id}.output`),
  ];
}

/** The base a variable reads (`inputs.x`, `steps.<id>.output`) and the path in it. */
export function splitVariable(name: string): { base: string; path: string } {
  const m = /^(inputs\.[^.]+|steps\.[^.]+\.output)(?:\.(.*))?$/.exec(name);
  return m?.[1] ? { base: m[1], path: m[2] ?? "" } : { base: name, path: "" };
}

export const joinVariable = (base: string, path: string) => (path.trim() ? `${base}.${path.trim()}` : base);

/** The step's branches, or none when its `next` is a step id or nothing. */
export const branchesOf = (step: Step): Branch[] => (Array.isArray(step.next) ? (step.next as Branch[]) : []);

/** The step's `next` set to `branches`. */
export const setBranches = (w: Workflow, index: number, branches: Branch[]) =>
  updateStep(w, index, (s) => ({ ...s, next: branches }) as Step);

/** A first branch for a step that had a plain `next`: on its output, to that step (or the one below). */
export function firstBranch(w: Workflow, index: number): Branch {
  const step = w.steps[index];
  const to =
    (typeof step?.next === "string" ? step.next : undefined) ??
    w.steps[index + 1]?.id ??
    w.steps.find((_, i) => i !== index)?.id ??
    "";
  return { when: { "==": [{ var: `steps.${step?.id ?? ""}.output` }, ""] }, to };
}

/** A branch as a short label (the graph's arrows): `kind == "rain"`, `otherwise`, `condition`. */
export function branchLabel(b: Branch): string {
  const f = branchFormOf(b);
  if (f.kind === "otherwise") return "otherwise";
  if (f.kind === "json") return "condition";
  const { base, path } = splitVariable(f.variable);
  const short = path || base.replace(/^inputs\./, "").replace(/^steps\.(.+)\.output$/, "$1");
  return `${short} ${f.operator} ${f.value}`;
}
