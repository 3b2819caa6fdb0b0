/**
 * Evaluation assertions (api.md "Evaluations"): how a case's assertions are checked when it is
 * saved, and how they judge one run's output. Text assertions apply to `output.text`, or to the
 * JSON output serialized; `expectedOutput` alone means `equals`.
 */

import type { Assertion, AssertionType, LlmJudgeAssertion } from "@kiln/contracts/assertions";
import { compileSafeRegex, safeRegexProblem } from "@kiln/contracts/safe-regex";
import type { FieldIssue } from "@kiln/kit/errors";
import { JSONPath } from "jsonpath-plus";
import { conformanceOf, schemaProblemOf } from "./json-schema.js";
import { isPlainObject, jsonEquals, tryParseJson } from "./json-value.js";

export type { Assertion, AssertionType, LlmJudgeAssertion } from "@kiln/contracts/assertions";

/** A model id, "provider/model" (a route: "route/<name>"), and what a malformed one is told. */
export const MODEL_ID = /^[^/\s]+\/\S+$/;
export const MODEL_ID_ISSUE = 'must be a model id such as "openai/gpt-4o-mini"';

/** Passing score of an llm_judge without a threshold. */
export const DEFAULT_JUDGE_THRESHOLD = 0.5;

const FIELDS: Record<AssertionType, { required: string[]; optional: string[] }> = {
  equals: { required: ["value"], optional: [] },
  contains: { required: ["value"], optional: [] },
  regex: { required: ["pattern"], optional: ["flags"] },
  json_schema: { required: ["schema"], optional: [] },
  json_path: { required: ["path", "equals"], optional: [] },
  max_latency_ms: { required: ["value"], optional: [] },
  max_cost_usd: { required: ["value"], optional: [] },
  llm_judge: { required: ["rubric"], optional: ["model", "threshold"] },
};

const isAssertionType = (t: unknown): t is AssertionType => typeof t === "string" && Object.hasOwn(FIELDS, t);

/** Why a JSONPath expression cannot be used; undefined when it can. jsonpath-plus itself is lenient. */
function jsonPathProblemOf(path: string): string | undefined {
  if (!path.startsWith("$")) return 'must start with "$"';
  let depth = 0;
  let quote: string | undefined;
  for (const ch of path) {
    if (quote) {
      if (ch === quote) quote = undefined;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "[" || ch === "(") depth++;
    else if (ch === "]" || ch === ")") depth--;
    if (depth < 0) return "has an unbalanced bracket";
  }
  if (quote || depth !== 0) return "has an unbalanced bracket or quote";
  try {
    JSONPath({ path, json: {}, wrap: true, eval: "safe" });
  } catch (e) {
    return `is not a JSONPath expression: ${e instanceof Error ? e.message : String(e)}`;
  }
  return undefined;
}

const isNonNegative = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;

/**
 * A JSON field of an assertion whose text could not be read (an assertion message's JsonText that
 * is not JSON): checkAssertions reports its issue at the field.
 */
export class UnreadableJson {
  constructor(readonly issue: string) {}
}

/**
 * Checks one case's assertions (JSON values). Issues name the place, e.g.
 * `cases[0].assertions[1].pattern`; the assertions come back only when there was none.
 */
export function checkAssertions(value: unknown, field: string): { assertions: Assertion[]; issues: FieldIssue[] } {
  if (!Array.isArray(value)) return { assertions: [], issues: [{ field, issue: "must be an array" }] };
  const issues: FieldIssue[] = [];
  value.forEach((raw, j) => {
    checkAssertion(raw, `${field}[${j}]`, issues);
  });
  return { assertions: issues.length === 0 ? (value as Assertion[]) : [], issues };
}

function checkAssertion(raw: unknown, at: string, issues: FieldIssue[]): void {
  if (!isPlainObject(raw)) {
    issues.push({ field: at, issue: "must be an object" });
    return;
  }
  const type = raw.type;
  if (!isAssertionType(type)) {
    issues.push({ field: `${at}.type`, issue: `must be one of ${Object.keys(FIELDS).join(", ")}` });
    return;
  }
  const add = (key: string, issue: string) => issues.push({ field: `${at}.${key}`, issue });
  const unreadable = Object.entries(raw).filter((e): e is [string, UnreadableJson] => e[1] instanceof UnreadableJson);
  if (unreadable.length > 0) {
    for (const [key, value] of unreadable) add(key, value.issue);
    return;
  }
  const { required, optional } = FIELDS[type];
  for (const key of Object.keys(raw)) {
    if (key !== "type" && !required.includes(key) && !optional.includes(key)) add(key, "is not allowed");
  }
  for (const key of required) if (!Object.hasOwn(raw, key)) add(key, "is required");
  switch (type) {
    case "equals":
      break;
    case "contains":
      if (Object.hasOwn(raw, "value") && typeof raw.value !== "string") add("value", "must be a string");
      break;
    case "regex": {
      if (raw.flags !== undefined && (typeof raw.flags !== "string" || !/^[dgimsuvy]*$/.test(raw.flags))) {
        add("flags", "must be regular expression flags (d, g, i, m, s, u, v, y)");
        break;
      }
      if (typeof raw.pattern !== "string") {
        if (Object.hasOwn(raw, "pattern")) add("pattern", "must be a string");
        break;
      }
      // Run with RE2 (linear time in the output, whatever the pattern): refused here when it cannot.
      const problem = safeRegexProblem(raw.pattern, raw.flags as string | undefined);
      if (problem) add(problem.includes("flag") ? "flags" : "pattern", problem);
      break;
    }
    case "json_schema": {
      if (!Object.hasOwn(raw, "schema")) break;
      const problem = schemaProblemOf(raw.schema);
      if (problem) add("schema", problem);
      break;
    }
    case "json_path": {
      if (!Object.hasOwn(raw, "path")) break;
      const problem = typeof raw.path === "string" ? jsonPathProblemOf(raw.path) : "must be a string";
      if (problem) add("path", problem);
      break;
    }
    case "max_latency_ms":
    case "max_cost_usd":
      if (Object.hasOwn(raw, "value") && !isNonNegative(raw.value)) add("value", "must be a number ≥ 0");
      break;
    case "llm_judge":
      if (Object.hasOwn(raw, "rubric") && (typeof raw.rubric !== "string" || raw.rubric.trim() === ""))
        add("rubric", "must be a non-empty string");
      if (raw.model !== undefined && (typeof raw.model !== "string" || !MODEL_ID.test(raw.model)))
        add("model", MODEL_ID_ISSUE);
      if (
        raw.threshold !== undefined &&
        (typeof raw.threshold !== "number" || !(raw.threshold >= 0 && raw.threshold <= 1))
      )
        add("threshold", "must be a number from 0 to 1");
      break;
  }
}

/** The assertions a case runs: its own, or `equals` its expected output when it has none. */
export function effectiveAssertions(assertions: Assertion[], expectedOutput: unknown): Assertion[] {
  if (assertions.length > 0 || expectedOutput === undefined) return assertions;
  return [{ type: "equals", value: expectedOutput }];
}

/** What a run gave: its output (null when it produced none), latency and cost. */
export interface Observation {
  output: { text: string; json?: unknown } | null;
  latencyMs: number;
  estimatedCostUsd: number | null;
}

export interface AssertionResult {
  type: AssertionType;
  passed: boolean;
  message: string;
}

/** An llm_judge verdict: a score from 0 to 1 and the judge's reason. */
export interface JudgeVerdict {
  score: number;
  reason: string;
}

/** Asks a model to grade `outputText` by the rubric; rejects when the model cannot be asked. */
export type Judge = (assertion: LlmJudgeAssertion, outputText: string) => Promise<JudgeVerdict>;

/** The text text assertions see: `output.text`, or the JSON output serialized. */
export function outputTextOf(output: { text: string; json?: unknown }): string {
  return output.json !== undefined ? JSON.stringify(output.json) : output.text;
}

/** The output as a JSON value: `output.json`, else the text parsed; undefined when it is not JSON. */
function outputJsonOf(output: { text: string; json?: unknown }): { ok: true; value: unknown } | { ok: false } {
  if (output.json !== undefined) return { ok: true, value: output.json };
  return tryParseJson(output.text);
}

const short = (v: unknown) => {
  const text = typeof v === "string" ? v : JSON.stringify(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

/** `equals`: JSON values when both sides are JSON (a string expectation holding JSON counts), else the text. */
function checkEquals(expected: unknown, output: { text: string; json?: unknown }): AssertionResult {
  const actual = outputJsonOf(output);
  const wanted = typeof expected === "string" ? tryParseJson(expected) : { ok: true as const, value: expected };
  const passed =
    actual.ok && wanted.ok
      ? jsonEquals(actual.value, wanted.value)
      : outputTextOf(output) === (typeof expected === "string" ? expected : JSON.stringify(expected));
  return {
    type: "equals",
    passed,
    message: passed
      ? "the output equals the expected value"
      : `expected ${short(expected)}, got ${short(outputTextOf(output))}`,
  };
}

async function evaluateOne(assertion: Assertion, observation: Observation, judge: Judge): Promise<AssertionResult> {
  const result = (passed: boolean, message: string): AssertionResult => ({ type: assertion.type, passed, message });
  if (assertion.type === "max_latency_ms") {
    const passed = observation.latencyMs <= assertion.value;
    return result(passed, `latency ${observation.latencyMs} ms ${passed ? "≤" : ">"} ${assertion.value} ms`);
  }
  if (assertion.type === "max_cost_usd") {
    const cost = observation.estimatedCostUsd;
    if (cost === null) return result(false, "the run's cost is unknown (a model without a price)");
    const passed = cost <= assertion.value;
    return result(passed, `cost ${cost} USD ${passed ? "≤" : ">"} ${assertion.value} USD`);
  }
  const output = observation.output;
  if (!output) return result(false, "the run produced no output");
  const text = outputTextOf(output);
  switch (assertion.type) {
    case "equals":
      return checkEquals(assertion.value, output);
    case "contains": {
      const passed = text.includes(assertion.value);
      return result(passed, `the output ${passed ? "contains" : "does not contain"} ${short(assertion.value)}`);
    }
    case "regex": {
      const passed = compileSafeRegex(assertion.pattern, assertion.flags).test(text);
      return result(
        passed,
        `the output ${passed ? "matches" : "does not match"} /${assertion.pattern}/${assertion.flags ?? ""}`,
      );
    }
    case "json_schema": {
      const json = outputJsonOf(output);
      const conformance = conformanceOf(assertion.schema, json.ok ? json.value : output.text);
      return conformance.valid
        ? result(true, "the output conforms to the schema")
        : result(false, `the output does not conform to the schema: ${conformance.message}`);
    }
    case "json_path": {
      const json = outputJsonOf(output);
      if (!json.ok) return result(false, "the output is not JSON");
      let matches: unknown[];
      try {
        matches = JSONPath({ path: assertion.path, json: json.value as object, wrap: true, eval: "safe" }) as unknown[];
      } catch (e) {
        return result(false, `${assertion.path} failed: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (matches.length === 0) return result(false, `${assertion.path} matches nothing`);
      const actual = matches.length === 1 ? matches[0] : matches;
      const passed = jsonEquals(actual, assertion.equals);
      return result(
        passed,
        passed
          ? `${assertion.path} equals ${short(assertion.equals)}`
          : `${assertion.path} is ${short(actual)}, expected ${short(assertion.equals)}`,
      );
    }
    case "llm_judge": {
      const threshold = assertion.threshold ?? DEFAULT_JUDGE_THRESHOLD;
      let verdict: JudgeVerdict;
      try {
        verdict = await judge(assertion, text);
      } catch (e) {
        return result(false, `the judge could not grade the output: ${e instanceof Error ? e.message : String(e)}`);
      }
      const passed = verdict.score >= threshold;
      return result(passed, `score ${verdict.score} ${passed ? "≥" : "<"} ${threshold}: ${verdict.reason}`);
    }
  }
}

/** Judges one run's observation by each assertion, in order. Never rejects. */
export async function evaluateAssertions(
  assertions: Assertion[],
  observation: Observation,
  judge: Judge,
): Promise<AssertionResult[]> {
  const results: AssertionResult[] = [];
  for (const assertion of assertions) results.push(await evaluateOne(assertion, observation, judge));
  return results;
}
