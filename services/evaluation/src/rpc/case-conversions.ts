/**
 * Evaluation cases between their messages and the service: a case's content (CaseContent) read
 * into a new case to check, a stored case into its message. An assertion message and the JSON value
 * the store keeps (api.md's shape) are the same assertion.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { invalidArgument } from "@kiln/kit/errors";
import { type JsonText, jsonText, jsonTextOf, readJsonText, textOf } from "@kiln/kit/json-text";
import { bytesText, LIMITS } from "@kiln/kit/limits";
import type {
  Assertion as AssertionMessage,
  AssertionSchema,
  CaseContent,
  EvaluationCaseSchema,
} from "@kiln/proto/evaluation";
import { type Assertion, UnreadableJson } from "../domain/assertions.js";
import type { NewCaseInput } from "../domain/new-cases.js";
import type { CaseDoc } from "../store/evaluation-store.js";

/** `{[key]: value}` of a JSON field: nothing when unset, an UnreadableJson when it is not JSON. */
function jsonField(key: string, message: JsonText | undefined): Record<string, unknown> {
  if (message === undefined) return {};
  const read = readJsonText(message);
  return { [key]: read.ok ? read.value : new UnreadableJson(read.issue) };
}

/** An assertion message as its JSON value; `{}` (no type) when no kind is set. */
export function assertionValueOf(message: AssertionMessage): Record<string, unknown> {
  const { kind } = message;
  switch (kind.case) {
    case "equals":
      return { type: "equals", ...jsonField("value", kind.value.value) };
    case "contains":
      return { type: "contains", value: kind.value.value };
    case "regex":
      return {
        type: "regex",
        pattern: kind.value.pattern,
        ...(kind.value.flags !== undefined && { flags: kind.value.flags }),
      };
    case "jsonSchema":
      return { type: "json_schema", ...jsonField("schema", kind.value.schema) };
    case "jsonPath":
      return { type: "json_path", path: kind.value.path, ...jsonField("equals", kind.value.equals) };
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
      return {};
  }
}

/**
 * A case's content as a new case to check. Its assertions, as JSON, are bounded as the REST API
 * bounds them (docs/api.md "Limits"); `field` names them in the refusal.
 */
export function newCaseOf(content: CaseContent | undefined, field: string): NewCaseInput {
  const assertions = (content?.assertions ?? []).map(assertionValueOf);
  const bytes = Buffer.byteLength(JSON.stringify(assertions), "utf8");
  if (bytes > LIMITS.assertionsBytes) {
    const issue = `must be at most ${bytesText(LIMITS.assertionsBytes)} as JSON`;
    throw invalidArgument("invalid request", [{ field, issue }]);
  }
  return {
    name: content?.name,
    inputJson: content?.input === undefined ? undefined : textOf(content.input),
    expectedOutputJson: content?.expectedOutput === undefined ? undefined : textOf(content.expectedOutput),
    assertions,
  };
}

/** A stored assertion (checked when its case was saved) as its message. */
export function assertionToProto(a: Assertion): MessageInitShape<typeof AssertionSchema> {
  switch (a.type) {
    case "equals":
      return { kind: { case: "equals", value: { value: jsonText(a.value) } } };
    case "contains":
      return { kind: { case: "contains", value: { value: a.value } } };
    case "regex":
      return { kind: { case: "regex", value: { pattern: a.pattern, flags: a.flags } } };
    case "json_schema":
      return { kind: { case: "jsonSchema", value: { schema: jsonText(a.schema) } } };
    case "json_path":
      return { kind: { case: "jsonPath", value: { path: a.path, equals: jsonText(a.equals) } } };
    case "max_latency_ms":
      return { kind: { case: "maxLatencyMs", value: { value: a.value } } };
    case "max_cost_usd":
      return { kind: { case: "maxCostUsd", value: { value: a.value } } };
    case "llm_judge":
      return { kind: { case: "llmJudge", value: { rubric: a.rubric, model: a.model, threshold: a.threshold } } };
  }
}

export function caseToProto(doc: CaseDoc): MessageInitShape<typeof EvaluationCaseSchema> {
  return {
    id: doc._id,
    skillId: doc.skillId,
    organizationId: doc.organizationId,
    content: {
      name: doc.name,
      input: jsonTextOf(doc.inputJson),
      expectedOutput: doc.expectedOutputJson === null ? undefined : jsonTextOf(doc.expectedOutputJson),
      assertions: (JSON.parse(doc.assertionsJson) as Assertion[]).map(assertionToProto),
    },
    createdAt: timestampFromDate(doc.createdAt),
  };
}
