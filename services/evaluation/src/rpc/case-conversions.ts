/**
 * Evaluation cases between their messages and the service: a case's content (CaseContent) read
 * into a new case to check, a stored case into its message. An assertion message and the JSON value
 * the store keeps (api.md's shape) are the same assertion.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Assertion, assertionFieldsOf, assertionMessage } from "@kiln/contracts/assertions";
import { invalidArgument } from "@kiln/kit/errors";
import { type JsonText, jsonText, jsonTextOf, readJsonText, textOf } from "@kiln/kit/json-text";
import { bytesText, LIMITS } from "@kiln/kit/limits";
import type {
  Assertion as AssertionMessage,
  AssertionSchema,
  CaseContent,
  EvaluationCaseSchema,
} from "@kiln/proto/evaluation";
import { UnreadableJson } from "../domain/assertions.js";
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
  return assertionFieldsOf(message, jsonField) ?? {};
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
export const assertionToProto = (a: Assertion): MessageInitShape<typeof AssertionSchema> =>
  assertionMessage(a, jsonText);

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
