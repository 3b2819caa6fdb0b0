import type { Assertion as AssertionJson, AssertionType } from "@kiln/contracts/assertions";
import { LIMITS } from "@kiln/kit/limits";
import Type from "typebox";
import { MAX_JSON_BYTES } from "../json-limits.js";
import { ref } from "../schemas.js";

/** A target: "draft", "published", or a label of the skill (docs/labels.md). */
export const TargetLabel = Type.String({
  pattern: "^[a-z][a-z0-9-]{0,39}$",
  description: '"draft", "published", or a label of the skill (production, latest, staging, …)',
});

/**
 * One assertion (api.md "Evaluations"): `type` picks the fields it takes, and it must have exactly
 * those, of the right JSON types. Written as if/then (not anyOf) so that a refusal names the field
 * that is wrong instead of every alternative. What the values mean (the regex compiles, the schema
 * and JSONPath are valid, bounds are not negative) is for the evaluation service to judge.
 */
const ASSERTION_FIELDS: Record<
  AssertionType,
  { required: Record<string, unknown>; optional?: Record<string, unknown> }
> = {
  equals: {
    required: {
      value: {
        description: "compared with output.text, or with the JSON output",
        [MAX_JSON_BYTES]: LIMITS.expectedOutputBytes,
      },
    },
  },
  contains: { required: { value: { type: "string", maxLength: LIMITS.assertionTextChars } } },
  regex: {
    required: {
      pattern: {
        type: "string",
        maxLength: 1_000,
        description: "a regular expression in RE2 syntax (no backreferences or lookaround), run in linear time",
      },
    },
    optional: {
      flags: { type: "string", maxLength: 10, description: "of d, g, i, m, s, u, y (d, g, u and y change nothing)" },
    },
  },
  json_schema: {
    required: {
      schema: {
        type: ["object", "boolean"],
        additionalProperties: true,
        description: "a JSON Schema (2020-12) the JSON output must match",
        [MAX_JSON_BYTES]: LIMITS.jsonSchemaBytes,
      },
    },
  },
  json_path: {
    required: {
      path: { type: "string", maxLength: 1_000, description: 'a JSONPath into the JSON output, e.g. "$.summary"' },
      equals: { [MAX_JSON_BYTES]: LIMITS.expectedOutputBytes },
    },
  },
  max_latency_ms: { required: { value: { type: "number", description: "≥ 0" } } },
  max_cost_usd: { required: { value: { type: "number", description: "≥ 0" } } },
  llm_judge: {
    required: {
      rubric: { type: "string", maxLength: LIMITS.assertionTextChars, description: "what a passing output does" },
    },
    optional: {
      model: {
        type: "string",
        maxLength: 200,
        description: "the judge, e.g. openai/gpt-4o-mini; default: the deployment's default model",
      },
      threshold: { type: "number", description: "the passing score, 0 to 1; default 0.5" },
    },
  },
};

/** The schema name of each assertion type: `contains` → `ContainsAssertion`. */
export const ASSERTION_SCHEMA_NAMES = Object.fromEntries(
  Object.keys(ASSERTION_FIELDS).map((type) => [
    type,
    `${type.replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase())}Assertion`,
  ]),
);

/** One named schema per assertion type: the branches of the union below. */
export const ASSERTION_SCHEMAS = Object.entries(ASSERTION_FIELDS).map(([type, fields]) =>
  Type.Unsafe<Record<string, unknown> & { type: string }>({
    $id: ASSERTION_SCHEMA_NAMES[type],
    type: "object",
    title: `${type} assertion`,
    required: ["type", ...Object.keys(fields.required)],
    properties: { type: { type: "string", const: type }, ...fields.required, ...fields.optional },
    additionalProperties: false,
  }),
);

/** An assertion as AssertionView admits and shows it (api.md "Evaluations"): the kinds of @kiln/contracts. */
export type { AssertionJson };

/**
 * An assertion: the union of ASSERTION_SCHEMAS, discriminated by `type` (ajv's `discriminator`
 * validates only the branch the type names, so errors speak of that branch; openapi-typescript
 * turns it into a discriminated union). Requests and case views use the same schema.
 */
export const AssertionView = Type.Unsafe<AssertionJson>({
  $id: "Assertion",
  type: "object",
  description:
    "Text assertions apply to output.text, or to the JSON output serialized; json_schema and json_path to the JSON output.",
  discriminator: { propertyName: "type" },
  required: ["type"],
  oneOf: ASSERTION_SCHEMAS.map((schema) => ref(schema)),
});

export const Assertion = ref(AssertionView);

/** The assertion types, in the order api.md lists them. */
export const ASSERTION_TYPES = Object.keys(ASSERTION_FIELDS);
