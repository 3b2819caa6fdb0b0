/**
 * Skill composition (api.md "Skills"): ordered prompt steps whose variables are bound to the skill
 * input, to earlier steps' outputs, or to literals; and the skill's input and output schemas derived
 * from them. Pure: the use case resolves prompts and versions first.
 */
import { LIMITS } from "@kiln/kit/limits";
import { fieldPath, type Issues } from "./issues.js";
import { isJsonObject, type JsonObject, type JsonValue, ownValue } from "./json-schema.js";
import type { ResponseFormat } from "./prompt-version.js";

export const ALIAS_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const MAX_STEPS = LIMITS.promptsPerSkill;

export type Binding =
  | { kind: "input"; field: string }
  | { kind: "step"; alias: string; path: string[] }
  | { kind: "literal"; value: JsonValue };

const INPUT_BINDING = /^\{\{\s*input\.([^.\s{}]+)\s*\}\}$/;
const STEP_BINDING = /^\{\{\s*steps\.([A-Za-z_][A-Za-z0-9_]{0,63})\.output((?:\.[^.\s{}]+)*)\s*\}\}$/;

/**
 * `"{{input.x}}"`, `"{{steps.<alias>.output}}"`, `"{{steps.<alias>.output.field}}"` or a literal.
 * A string with `{{` in it that is none of these is refused rather than taken as a literal, so a
 * typo such as `{{inputs.city}}` cannot silently become text. Returns a reason when refused.
 */
export function parseBinding(value: JsonValue): Binding | { kind: "invalid"; reason: string } {
  if (typeof value !== "string" || !value.includes("{{")) return { kind: "literal", value };
  const input = INPUT_BINDING.exec(value);
  if (input?.[1]) return { kind: "input", field: input[1] };
  const step = STEP_BINDING.exec(value);
  if (step?.[1]) return { kind: "step", alias: step[1], path: (step[2] ?? "").split(".").filter((s) => s !== "") };
  return {
    kind: "invalid",
    reason: 'must be "{{input.<field>}}", "{{steps.<alias>.output}}", "{{steps.<alias>.output.<field>}}" or a literal',
  };
}

/** The alias of each step: as given, else `step<order>`; each must be well-formed and unique. */
export function checkAliases(issues: Issues, field: string, given: readonly (string | undefined)[]): string[] {
  const aliases = given.map((alias, i) => alias ?? `step${i + 1}`);
  aliases.forEach((alias, i) => {
    const at = fieldPath(fieldPath(field, i), "alias");
    if (!ALIAS_PATTERN.test(alias))
      issues.add(at, "must start with a letter or _ and hold at most 64 letters, digits or _");
    const first = aliases.indexOf(alias);
    if (first < i) issues.add(at, `"${alias}" is already the alias of ${fieldPath(field, first)}`);
  });
  return aliases;
}

/** One step as the checks below need it: the pinned prompt version's schema and response format. */
export interface StepContract {
  alias: string;
  /** Parsed bindings (the step's `variables`). */
  variables: JsonObject;
  variablesSchema: JsonObject;
  responseFormat: ResponseFormat;
}

function declaredVariables(schema: JsonObject): JsonObject {
  const properties = ownValue(schema, "properties");
  return isJsonObject(properties) ? properties : {};
}

function requiredVariables(schema: JsonObject): string[] {
  const required = ownValue(schema, "required");
  return Array.isArray(required) ? required.filter((r): r is string => typeof r === "string") : [];
}

/**
 * Every binding names a declared variable of its prompt version and, for step outputs, an earlier
 * step (and a field that step's output can have). Issues go to `<field>[i].variables.<name>`.
 */
export function checkBindings(issues: Issues, field: string, steps: readonly StepContract[]): void {
  steps.forEach((step, i) => {
    const base = fieldPath(fieldPath(field, i), "variables");
    const declared = declaredVariables(step.variablesSchema);
    for (const [name, value] of Object.entries(step.variables)) {
      const at = fieldPath(base, name);
      if (!Object.hasOwn(declared, name)) {
        issues.add(at, "is not a variable declared by this prompt version's variablesSchema");
        continue;
      }
      const binding = parseBinding(value);
      if (binding.kind === "invalid") issues.add(at, binding.reason);
      if (binding.kind !== "step") continue;
      const source = steps.findIndex((s) => s.alias === binding.alias);
      if (source < 0 || source >= i) {
        issues.add(at, `refers to step "${binding.alias}", which does not come before this step`);
        continue;
      }
      const [first] = binding.path;
      const format = steps[source]?.responseFormat;
      if (first === undefined || !format) continue;
      if (format.type === "text") issues.add(at, `step "${binding.alias}" answers text, which has no field "${first}"`);
      else {
        const properties = ownValue(format.schema, "properties");
        if (isJsonObject(properties) && !Object.hasOwn(properties, first)) {
          issues.add(at, `the output schema of step "${binding.alias}" has no field "${first}"`);
        }
      }
    }
  });
}

function resolvePointer(root: JsonValue, pointer: string): JsonValue | undefined {
  let current: JsonValue | undefined = root;
  for (const raw of pointer.split("/").slice(1)) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(current)) current = current[Number(segment)];
    else if (isJsonObject(current)) current = ownValue(current, segment);
    else return undefined;
  }
  return current;
}

/**
 * A copy of `schema` with its local `$ref`s ("#/$defs/x", relative to `root`) replaced by what they
 * point at, so a variable's schema still means the same once lifted out of its prompt's document
 * into the skill's input schema. A recursive reference becomes `{}` (anything) at the cycle.
 */
export function inlineLocalRefs(schema: JsonValue, root: JsonValue, resolving: readonly string[] = []): JsonValue {
  if (Array.isArray(schema)) return schema.map((item) => inlineLocalRefs(item, root, resolving));
  if (!isJsonObject(schema)) return schema;
  const ref = ownValue(schema, "$ref");
  if (typeof ref === "string" && (ref === "#" || ref.startsWith("#/"))) {
    const target = resolvePointer(root, ref.slice(1));
    if (target !== undefined) {
      const resolved = resolving.includes(ref) ? {} : inlineLocalRefs(target, root, [...resolving, ref]);
      const rest = Object.entries(schema).filter(([key]) => key !== "$ref");
      if (rest.length === 0) return resolved;
      const siblings = Object.fromEntries(rest.map(([key, value]) => [key, inlineLocalRefs(value, root, resolving)]));
      return { allOf: [resolved, siblings] };
    }
  }
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, inlineLocalRefs(value, root, resolving)]),
  );
}

export interface SkillSchemas {
  inputSchema: JsonObject;
  outputSchema: JsonObject;
}

/**
 * The skill's input schema: one property per input field the steps read (a variable bound to
 * `{{input.x}}`, or unbound and so read from the input field of its own name), with the variable's
 * schema (`allOf` when steps disagree), required when a step requires it. The output schema: the
 * last step's json_schema, else a string.
 */
export function deriveSkillSchemas(steps: readonly StepContract[]): SkillSchemas {
  const schemasByField = new Map<string, JsonValue[]>();
  const required: string[] = [];
  for (const step of steps) {
    const requiredHere = requiredVariables(step.variablesSchema);
    for (const [name, schema] of Object.entries(declaredVariables(step.variablesSchema))) {
      const bound = ownValue(step.variables, name);
      const binding = bound === undefined ? { kind: "input" as const, field: name } : parseBinding(bound);
      if (binding.kind !== "input") continue;
      const lifted = inlineLocalRefs(schema, step.variablesSchema);
      const known = schemasByField.get(binding.field) ?? [];
      if (!known.some((k) => JSON.stringify(k) === JSON.stringify(lifted))) known.push(lifted);
      schemasByField.set(binding.field, known);
      if (requiredHere.includes(name) && !required.includes(binding.field)) required.push(binding.field);
    }
  }
  // Object.fromEntries defines own properties, so a field named "__proto__" stays a field.
  const properties = Object.fromEntries(
    [...schemasByField].map(([name, list]): [string, JsonValue] => [
      name,
      list.length === 1 ? (list[0] ?? {}) : { allOf: list },
    ]),
  );
  const inputSchema: JsonObject = { type: "object", properties, ...(required.length > 0 && { required }) };
  const last = steps.at(-1)?.responseFormat;
  const outputSchema: JsonObject = last?.type === "json_schema" ? last.schema : { type: "string" };
  return { inputSchema, outputSchema };
}
