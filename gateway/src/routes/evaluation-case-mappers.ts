/**
 * Evaluation cases between the REST API and their messages (docs/api.md "Evaluations"): a case's
 * content as a create or an update sends it, a case as the API shows it. An assertion's JSON
 * values (an expected value, a schema) travel as JsonText, the rest as fields of its kind.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { BundleCase } from "@kiln/contracts/bundle";
import type { JsonText } from "@kiln/kit/json-text";
import type { Assertion, AssertionSchema, CaseContentSchema, EvaluationCase } from "@kiln/proto/evaluation";
import type { Static } from "typebox";
import { requestJsonText as json } from "../json-limits.js";
import type { AssertionJson } from "./evaluation-assertion-views.js";
import type { NewCase } from "./evaluation-views.js";
import { isObject, iso } from "./views.js";

/** The value a JsonText carries; null when it is unset. */
export const jsonValueOf = (message: JsonText | undefined): unknown =>
  message === undefined ? null : JSON.parse(message.json);

export function assertionMessage(a: AssertionJson): MessageInitShape<typeof AssertionSchema> {
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

/** An assertion as the API shows it: the fields it was created with. */
export function assertionView(message: Assertion): AssertionJson {
  const { kind } = message;
  switch (kind.case) {
    case "equals":
      return { type: "equals", value: jsonValueOf(kind.value.value) };
    case "contains":
      return { type: "contains", value: kind.value.value };
    case "regex":
      return {
        type: "regex",
        pattern: kind.value.pattern,
        ...(kind.value.flags !== undefined && { flags: kind.value.flags }),
      };
    case "jsonSchema":
      return { type: "json_schema", schema: jsonValueOf(kind.value.schema) };
    case "jsonPath":
      return { type: "json_path", path: kind.value.path, equals: jsonValueOf(kind.value.equals) };
    case "maxLatencyMs":
      return { type: "max_latency_ms", value: kind.value.value };
    case "maxCostUsd":
      return { type: "max_cost_usd", value: kind.value.value };
    case "llmJudge":
      return {
        type: "llm_judge",
        rubric: kind.value.rubric,
        ...(kind.value.model !== undefined && { model: kind.value.model }),
        ...(kind.value.threshold !== undefined && { threshold: kind.value.threshold }),
      };
    case undefined:
      throw new Error("evaluation returned an assertion of no kind");
  }
}

/**
 * A case's content as a create or an update sends it: what is left out is none (an expected output
 * of null too), an update replaces the whole content.
 */
export function caseContentOf(c: Static<typeof NewCase>): MessageInitShape<typeof CaseContentSchema> {
  return {
    name: c.name,
    input: json(c.input),
    expectedOutput: c.expectedOutput === undefined || c.expectedOutput === null ? undefined : json(c.expectedOutput),
    assertions: (c.assertions ?? []).map(assertionMessage),
  };
}

export function evaluationCaseView(c: EvaluationCase) {
  const content = c.content;
  return {
    id: c.id,
    skillId: c.skillId,
    organizationId: c.organizationId,
    name: content?.name ?? "",
    input: jsonValueOf(content?.input),
    expectedOutput: jsonValueOf(content?.expectedOutput),
    assertions: (content?.assertions ?? []).map(assertionView),
    createdAt: iso(c.createdAt) ?? "",
  };
}

/** A case as an exported bundle holds it (docs/bundles.md): no expectedOutput when it has none. */
export function bundleCaseOf(c: EvaluationCase): BundleCase {
  const { id, name, input, expectedOutput, assertions, createdAt } = evaluationCaseView(c);
  return {
    id,
    name,
    input: isObject(input) ? input : {},
    ...(c.content?.expectedOutput !== undefined && { expectedOutput }),
    assertions,
    createdAt,
  };
}
