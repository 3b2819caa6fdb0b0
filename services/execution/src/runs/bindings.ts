/**
 * Skill composition bindings (api.md "Skills"): a step variable is bound to "{{input.x}}",
 * "{{steps.<alias>.output}}", "{{steps.<alias>.output.<field>…}}" or a literal; a variable
 * without a binding takes the skill input field of the same name. A step's `output` is its
 * `output.json` when there is one, else its `output.text`.
 */
import type { ToolCall } from "@kiln/models/provider";

export interface StepOutput {
  text: string;
  json?: unknown;
  /** A prompt run's calls to its caller's tools (RunPromptRequest.tools): the run ended on them. */
  toolCalls?: ToolCall[];
  /** Why the model stopped, when not with a complete answer: "length" or "content_filter". */
  finishReason?: "length" | "content_filter";
}

// Field names as the catalog accepts them in bindings (skill-composition.ts): anything but ".",
// white space and braces. A narrower pattern here would run a saved binding as literal text.
const BINDING = /^\{\{\s*(input|inputs|steps)(?:\.([^\s{}]+))?\s*\}\}$/;

/**
 * Where a binding's input side reads from: skills say `{{input.x}}` (a field is required), agent
 * workflows `{{inputs.x}}` (also `{{inputs}}`, the whole input).
 */
export interface BindingSyntax {
  root: "input" | "inputs";
  wholeRoot: boolean;
}

const SKILL_SYNTAX: BindingSyntax = { root: "input", wholeRoot: false };

/** The value a step's output stands for in bindings. */
export const bindingValueOf = (output: StepOutput): unknown => (output.json !== undefined ? output.json : output.text);

function pathGet(value: unknown, path: string[]): unknown {
  let current = value;
  for (const segment of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = Object.hasOwn(current, segment) ? (current as Record<string, unknown>)[segment] : undefined;
  }
  return current;
}

/** Resolves one binding; `undefined` when what it names does not exist (the variable is then absent). */
export function resolveBinding(
  binding: unknown,
  input: Record<string, unknown>,
  outputs: ReadonlyMap<string, StepOutput>,
  syntax: BindingSyntax = SKILL_SYNTAX,
): unknown {
  if (typeof binding !== "string") return binding;
  const m = BINDING.exec(binding);
  if (!m?.[1]) return binding;
  if (m[2] === undefined && !(m[1] === syntax.root && syntax.wholeRoot)) return binding;
  const path = m[2] === undefined ? [] : m[2].split(".");
  if (path.includes("")) return binding;
  if (m[1] === "input" || m[1] === "inputs") return m[1] === syntax.root ? pathGet(input, path) : binding;
  const [alias, output, ...field] = path;
  if (!alias || output !== "output") return binding;
  const step = outputs.get(alias);
  return step === undefined ? undefined : pathGet(bindingValueOf(step), field);
}

/** The variables of one step: declared variables, each bound or taken from the input by name. */
export function bindVariables(
  declared: string[],
  bindings: Record<string, unknown>,
  input: Record<string, unknown>,
  outputs: ReadonlyMap<string, StepOutput>,
): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const name of declared) {
    const value = Object.hasOwn(bindings, name)
      ? resolveBinding(bindings[name], input, outputs)
      : Object.hasOwn(input, name)
        ? input[name]
        : undefined;
    if (value !== undefined)
      Object.defineProperty(variables, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return variables;
}
