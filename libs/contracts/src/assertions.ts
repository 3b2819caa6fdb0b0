/**
 * Evaluation assertions (docs/api.md "Evaluations"), the one list of their kinds that the gateway
 * (which admits and shows them) and the evaluation service (which checks and runs them) share, and
 * the one conversion between an assertion and its message (kiln.evaluation.v1.Assertion). An
 * assertion's free-form JSON values (an expected value, a schema) travel as JsonText; each side
 * says how it wraps and reads those.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { JsonText } from "@kiln/proto/common";
import type { Assertion as AssertionMessage, AssertionSchema } from "@kiln/proto/evaluation";

export type LlmJudgeAssertion = { type: "llm_judge"; rubric: string; model?: string; threshold?: number };

export type Assertion =
  | { type: "equals"; value: unknown }
  | { type: "contains"; value: string }
  | { type: "regex"; pattern: string; flags?: string }
  | { type: "json_schema"; schema: unknown }
  | { type: "json_path"; path: string; equals: unknown }
  | { type: "max_latency_ms"; value: number }
  | { type: "max_cost_usd"; value: number }
  | LlmJudgeAssertion;

export type AssertionType = Assertion["type"];

/** An assertion as its message; `json` wraps each free-form JSON value. */
export function assertionMessage(
  a: Assertion,
  json: (value: unknown) => JsonText,
): MessageInitShape<typeof AssertionSchema> {
  switch (a.type) {
    case "equals":
      return { kind: { case: "equals", value: { value: json(a.value) } } };
    case "contains":
      return { kind: { case: "contains", value: { value: a.value } } };
    case "regex":
      return { kind: { case: "regex", value: { pattern: a.pattern, flags: a.flags } } };
    case "json_schema":
      return { kind: { case: "jsonSchema", value: { schema: json(a.schema) } } };
    case "json_path":
      return { kind: { case: "jsonPath", value: { path: a.path, equals: json(a.equals) } } };
    case "max_latency_ms":
      return { kind: { case: "maxLatencyMs", value: { value: a.value } } };
    case "max_cost_usd":
      return { kind: { case: "maxCostUsd", value: { value: a.value } } };
    case "llm_judge":
      return { kind: { case: "llmJudge", value: { rubric: a.rubric, model: a.model, threshold: a.threshold } } };
  }
}

/** The fields of `fields` that are set (a message's unset optional fields are left out). */
const setFields = (fields: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));

/**
 * An assertion message as the fields of its JSON value: `jsonField(key, text)` gives the fields a
 * free-form JSON value makes (its reading of the text, or none). Undefined when no kind is set.
 */
export function assertionFieldsOf(
  message: AssertionMessage,
  jsonField: (key: string, text: JsonText | undefined) => Record<string, unknown>,
): Record<string, unknown> | undefined {
  const { kind } = message;
  switch (kind.case) {
    case "equals":
      return { type: "equals", ...jsonField("value", kind.value.value) };
    case "contains":
      return { type: "contains", value: kind.value.value };
    case "regex":
      return { type: "regex", pattern: kind.value.pattern, ...setFields({ flags: kind.value.flags }) };
    case "jsonSchema":
      return { type: "json_schema", ...jsonField("schema", kind.value.schema) };
    case "jsonPath":
      return { type: "json_path", path: kind.value.path, ...jsonField("equals", kind.value.equals) };
    case "maxLatencyMs":
      return { type: "max_latency_ms", value: kind.value.value };
    case "maxCostUsd":
      return { type: "max_cost_usd", value: kind.value.value };
    case "llmJudge": {
      const { rubric, model, threshold } = kind.value;
      return { type: "llm_judge", rubric, ...setFields({ model, threshold }) };
    }
    case undefined:
      return undefined;
  }
}
