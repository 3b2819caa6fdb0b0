/**
 * Evaluation cases between the REST API and their messages (docs/api.md "Evaluations"): a case's
 * content as a create or an update sends it, a case as the API shows it. An assertion's JSON
 * values (an expected value, a schema) travel as JsonText, the rest as fields of its kind.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { assertionFieldsOf, assertionMessage } from "@kiln/contracts/assertions";
import type { BundleCase } from "@kiln/contracts/bundle";
import type { JsonText } from "@kiln/kit/json-text";
import type { Assertion, CaseContentSchema, EvaluationCase } from "@kiln/proto/evaluation";
import type { Static } from "typebox";
import { requestJsonText as json } from "../json-limits.js";
import type { AssertionJson } from "./evaluation-assertion-views.js";
import type { NewCase } from "./evaluation-views.js";
import { fieldsOf, isObject, iso } from "./views.js";

/** The value a JsonText carries; null when it is unset. */
export const jsonValueOf = (message: JsonText | undefined): unknown =>
  message === undefined ? null : JSON.parse(message.json);

/** An assertion as the API shows it: the fields it was created with. */
export function assertionView(message: Assertion): AssertionJson {
  const fields = assertionFieldsOf(message, (key, text) => ({ [key]: jsonValueOf(text) }));
  if (fields === undefined) throw new Error("evaluation returned an assertion of no kind");
  // Every field of its kind is set: a JSON value left unset shows as null.
  return fields as AssertionJson;
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
    assertions: (c.assertions ?? []).map((a) => assertionMessage(a, json)),
  };
}

export function evaluationCaseView({ content, createdAt, ...ids }: EvaluationCase) {
  return {
    ...fieldsOf(ids),
    name: content?.name ?? "",
    input: jsonValueOf(content?.input),
    expectedOutput: jsonValueOf(content?.expectedOutput),
    assertions: (content?.assertions ?? []).map(assertionView),
    createdAt: iso(createdAt) ?? "",
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
