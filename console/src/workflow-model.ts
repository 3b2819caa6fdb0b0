/**
 * An agent's workflow as the builder edits it (docs/api.md "Agents"): steps added, moved, renamed
 * and removed, their input mappings, the entry, the transitions and the output binding. Every
 * edit answers a new workflow; a workflow whose steps run in list order (the entry first, each
 * step's `next` the step below it) stays so when steps are added, moved or removed.
 */
import type { Workflow } from "@kiln/sdk";

export type Step = Workflow["steps"][number];
export type StepType = Step["type"];
export type Next = Step["next"];

/** Where a step input comes from: a workflow input, an earlier step's output (at a path), or a literal. */
export type Mapping =
  | { source: "input"; field: string }
  | { source: "step"; stepId: string; path: string }
  | { source: "literal"; text: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The key of a step's ref that names what it runs, and the one that pins a version. */
export const REF_KEYS = {
  prompt: { id: "promptId", version: "promptVersionId" },
  skill: { id: "skillId", version: "skillVersionId" },
  tool: { id: "toolId", version: "toolVersionId" },
} as const;

export const EMPTY_INPUT_SCHEMA = { type: "object", properties: {}, required: [] };

/**
 * What the builder works on: `value` (any JSON, e.g. a new agent's `{}`) with the fields it edits
 * in place. Fields it does not edit are kept as they are; steps that are not objects are dropped.
 */
export function builderWorkflow(value: unknown): Workflow {
  const v = isObject(value) ? value : {};
  const steps = Array.isArray(v.steps) ? v.steps.filter(isObject) : [];
  return {
    ...v,
    inputSchema: isObject(v.inputSchema) ? v.inputSchema : EMPTY_INPUT_SCHEMA,
    entry: typeof v.entry === "string" ? v.entry : "",
    steps: steps as Step[],
    output: typeof v.output === "string" ? v.output : "",
  } as Workflow;
}

/** Whether the steps run in list order: the entry first, each `next` the step below, the last without one. */
export function isChain(w: Workflow): boolean {
  if (w.steps.length === 0) return true;
  if (w.entry !== w.steps[0]?.id) return false;
  return w.steps.every((s, i) => (i === w.steps.length - 1 ? s.next === undefined : s.next === w.steps[i + 1]?.id));
}

/** The steps chained in list order (entry first, each to the one below). */
function chained(w: Workflow, steps: Step[]): Workflow {
  const linked = steps.map((s, i) => withNext(s, steps[i + 1]?.id));
  return { ...w, steps: linked, entry: linked[0]?.id ?? "" };
}

function withNext(step: Step, next: Next): Step {
  const { next: _old, ...rest } = step;
  return next === undefined ? rest : { ...rest, next };
}

/** A step id from a name: letters, digits and _, starting with a letter, not yet taken. */
export function stepIdFor(name: string, taken: string[]): string {
  const base =
    name
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, "_")
      .replace(/^[^a-z]+/, "")
      .replace(/_+$/, "")
      .slice(0, 56) || "step";
  let id = base;
  for (let n = 2; taken.includes(id); n++) id = `${base}_${n}`;
  return id;
}

/** A new step running `refId` (a prompt, skill or tool), added last (and chained when the steps are). */
export function addStep(w: Workflow, type: StepType, refId: string, name: string): Workflow {
  const id = stepIdFor(
    name,
    w.steps.map((s) => s.id),
  );
  const step: Step = { id, type, ref: { [REF_KEYS[type].id]: refId }, input: {} };
  const steps = [...w.steps, step];
  if (isChain(w)) return { ...chained(w, steps), output: w.steps.length === 0 || isLastOutput(w) ? out(id) : w.output };
  return { ...w, steps, entry: w.entry || id };
}

const out = (id: string) => `{{steps.${id}.output}}`;
/** Whether the output is the last step's whole output (kept on the new last step when one is added). */
const isLastOutput = (w: Workflow) => w.output === "" || w.output === out(w.steps.at(-1)?.id ?? "");

/** The step at `index` moved by `delta` places (-1: up, 1: down). */
export function moveStep(w: Workflow, index: number, delta: number): Workflow {
  const to = index + delta;
  if (to < 0 || to >= w.steps.length) return w;
  const steps = [...w.steps];
  const [step] = steps.splice(index, 1);
  if (step) steps.splice(to, 0, step);
  return isChain(w) ? chained(w, steps) : { ...w, steps };
}

/** The step at `index` removed; transitions to it end the run there instead. */
export function removeStep(w: Workflow, index: number): Workflow {
  const gone = w.steps[index]?.id;
  const steps = w.steps.filter((_, i) => i !== index);
  if (isChain(w)) return { ...chained(w, steps), output: w.output === out(gone ?? "") ? "" : w.output };
  return {
    ...w,
    entry: w.entry === gone ? (steps[0]?.id ?? "") : w.entry,
    steps: steps.map((s) => (s.next === gone ? withNext(s, undefined) : s)),
  };
}

const STEP_REF = /(\{\{\s*steps\.)([A-Za-z_][A-Za-z0-9_]*)(\.output)/g;
const renamed = (text: string, from: string, to: string) =>
  text.replace(STEP_REF, (all, a: string, id: string, b: string) => (id === from ? `${a}${to}${b}` : all));

/** The step at `index` renamed, and every transition and binding that names it. */
export function renameStep(w: Workflow, index: number, id: string): Workflow {
  const from = w.steps[index]?.id;
  if (from === undefined || from === id) return w;
  const input = (values: Step["input"]) =>
    Object.fromEntries(
      Object.entries(values ?? {}).map(([k, v]) => [k, typeof v === "string" ? renamed(v, from, id) : v]),
    );
  const next = (n: Next): Next =>
    typeof n === "string" ? (n === from ? id : n) : n?.map((c) => (c.to === from ? { ...c, to: id } : c));
  const steps = w.steps.map((s, i) => {
    const moved = { ...s, id: i === index ? id : s.id, input: input(s.input) };
    return s.next === undefined ? moved : { ...moved, next: next(s.next) };
  });
  return { ...w, steps, entry: w.entry === from ? id : w.entry, output: renamed(w.output, from, id) };
}

/** The step at `index` with `change` applied. */
export function updateStep(w: Workflow, index: number, change: (s: Step) => Step): Workflow {
  return { ...w, steps: w.steps.map((s, i) => (i === index ? change(s) : s)) };
}

/** What comes after the step: the step named, or nothing (the run ends there). */
export const setNext = (w: Workflow, index: number, next: string) =>
  updateStep(w, index, (s) => withNext(s, next === "" ? undefined : next));

/** A binding string as the builder edits it. */
export function mappingOf(value: unknown): Mapping {
  if (typeof value !== "string") return { source: "literal", text: value === undefined ? "" : JSON.stringify(value) };
  const input = /^\{\{\s*inputs\.([^\s{}]+)\s*\}\}$/.exec(value);
  if (input?.[1]) return { source: "input", field: input[1] };
  const step = /^\{\{\s*steps\.([A-Za-z_][A-Za-z0-9_]*)\.output((?:\.[^.\s{}]+)*)\s*\}\}$/.exec(value);
  if (step?.[1]) return { source: "step", stepId: step[1], path: (step[2] ?? "").replace(/^\./, "") };
  return { source: "literal", text: value };
}

/** A fixed value as the input's type (from its schema) reads it: a number, a boolean, JSON; else the text. */
function literalOf(text: string, type: string | undefined): unknown {
  const t = text.trim();
  // Only a number written as it reads back ("4." stays text while "4.5" is typed).
  if ((type === "number" || type === "integer") && t !== "" && String(Number(t)) === t) return Number(t);
  if (type === "boolean" && (t === "true" || t === "false")) return t === "true";
  if ((type === "object" || type === "array") && t !== "") {
    try {
      return JSON.parse(t);
    } catch {
      return text;
    }
  }
  return text;
}

/** The binding of a mapping: a binding string, or the fixed value (typed as `type` says). */
export function bindingOf(m: Mapping, type?: string): unknown {
  if (m.source === "input") return `{{inputs.${m.field}}}`;
  if (m.source === "step") return `{{steps.${m.stepId}.output${m.path ? `.${m.path}` : ""}}}`;
  return literalOf(m.text, type);
}

/** The step's input `name` set to `m` (or removed when `m` is undefined); `type` is the input's schema type. */
export function setMapping(w: Workflow, index: number, name: string, m: Mapping | undefined, type?: string): Workflow {
  return updateStep(w, index, (s) => {
    const { [name]: _old, ...rest } = s.input ?? {};
    return { ...s, input: m === undefined ? rest : { ...rest, [name]: bindingOf(m, type) } };
  });
}

/** The names the workflow's input schema declares. */
export function inputNames(w: Workflow): string[] {
  const properties = (w.inputSchema as { properties?: unknown }).properties;
  return isObject(properties) ? Object.keys(properties) : [];
}

/** Where a validation issue belongs: a step (and the field in it), or a part of the workflow. */
export type IssuePlace =
  | { step: number; field: "id" | "ref" | "next" | "input" | "step"; name?: string }
  | { part: "inputSchema" | "entry" | "output" | "steps" | "workflow" };

/** The place of an issue's path (`steps[1].input.city`, `output`, `inputSchema.properties…`, ``). */
export function placeOf(path: string): IssuePlace {
  const p = path.replace(/^workflow\.?/, "");
  const step = /^steps\[(\d+)\](?:\.(id|ref|next|input)(?:\.([^.[]+))?)?/.exec(p);
  if (step) {
    const field = (step[2] as "id" | "ref" | "next" | "input" | undefined) ?? "step";
    return { step: Number(step[1]), field, ...(field === "input" && step[3] ? { name: step[3] } : {}) };
  }
  const part = /^(inputSchema|entry|output|steps)\b/.exec(p)?.[1];
  return { part: (part as "inputSchema" | "entry" | "output" | "steps" | undefined) ?? "workflow" };
}
