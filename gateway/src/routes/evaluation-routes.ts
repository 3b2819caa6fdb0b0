import { LIMITS } from "@kiln/kit/limits";
import type { EvaluationCase, EvaluationRun } from "@kiln/proto/evaluation";
import type { FastifyRequest } from "fastify";
import Type, { type Static } from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { principalOf, rpcOptions } from "../http/request.js";
import { jsonTextOf, MAX_JSON_BYTES } from "../json-limits.js";
import {
  Body,
  errorResponses,
  IdempotencyHeaders,
  List,
  ListQuery,
  Nullable,
  OneOf,
  ref,
  Timestamp,
} from "../schemas.js";
import {
  Id,
  IdParams,
  JsonObject,
  JsonValue,
  jsonText,
  Name,
  OrganizationId,
  organizationOf,
} from "./catalog-requests.js";
import { FreeJson, parseJson } from "./catalog-views.js";
import { OutputView, RunErrorView, UsageView } from "./run-routes.js";
import { isObject, iso } from "./views.js";

/**
 * Evaluation cases and evaluation runs of a skill (api.md "Evaluations"; spec §9: public beta).
 * The gateway checks shapes; the evaluation service owns the rules (which targets exist, which
 * cases belong to the skill, scoring) and the organization checks.
 */

const tags = ["evaluations"];
const config = { stability: "beta" as const };

/** A target: "draft", "published", or a label of the skill (docs/labels.md). */
const TargetLabel = Type.String({
  pattern: "^[a-z][a-z0-9-]{0,39}$",
  description: '"draft", "published", or a label of the skill (production, latest, staging, …)',
});

/**
 * One assertion (api.md "Evaluations"): `type` picks the fields it takes, and it must have exactly
 * those, of the right JSON types. Written as if/then (not anyOf) so that a refusal names the field
 * that is wrong instead of every alternative. What the values mean (the regex compiles, the schema
 * and JSONPath are valid, bounds are not negative) is for the evaluation service to judge.
 */
const ASSERTION_FIELDS: Record<string, { required: Record<string, unknown>; optional?: Record<string, unknown> }> = {
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

/**
 * An assertion: the union of ASSERTION_SCHEMAS, discriminated by `type` (ajv's `discriminator`
 * validates only the branch the type names, so errors speak of that branch; openapi-typescript
 * turns it into a discriminated union). Requests and case views use the same schema.
 */
export const AssertionView = Type.Unsafe<Record<string, unknown> & { type: string }>({
  $id: "Assertion",
  type: "object",
  description:
    "Text assertions apply to output.text, or to the JSON output serialized; json_schema and json_path to the JSON output.",
  discriminator: { propertyName: "type" },
  required: ["type"],
  oneOf: ASSERTION_SCHEMAS.map((schema) => ref(schema)),
});

const Assertion = ref(AssertionView);

const NewCase = Body({
  name: Type.Optional(Name),
  input: JsonObject("the skill input, matching its inputSchema", LIMITS.variablesBytes),
  expectedOutput: Type.Optional(
    JsonValue(
      "the output the skill should give (alone it means an equals assertion); null: none",
      LIMITS.expectedOutputBytes,
    ),
  ),
  assertions: Type.Optional(
    Type.Array(Assertion, { maxItems: LIMITS.assertionsPerCase, [MAX_JSON_BYTES]: LIMITS.assertionsBytes }),
  ),
});

export const EvaluationCaseView = Type.Object(
  {
    id: Type.String(),
    skillId: Type.String(),
    organizationId: Type.String(),
    name: Type.String(),
    input: FreeJson,
    expectedOutput: Type.Unknown({ description: "null when the case has none" }),
    assertions: Type.Array(ref(AssertionView), { description: "as created" }),
    createdAt: Timestamp,
  },
  { $id: "EvaluationCase" },
);

export function evaluationCaseView(c: EvaluationCase) {
  return {
    id: c.id,
    skillId: c.skillId,
    organizationId: c.organizationId,
    name: c.name,
    input: parseJson(c.inputJson),
    expectedOutput: c.expectedOutputJson === undefined ? null : parseJson(c.expectedOutputJson),
    assertions: (parseJson(c.assertionsJson) as Static<typeof AssertionView>[] | null) ?? [],
    createdAt: iso(c.createdAt) ?? "",
  };
}

type EvaluationStatus = "queued" | "running" | "completed" | "failed" | "cancelled";
const EvaluationStatus = OneOf(["queued", "running", "completed", "failed", "cancelled"], {
  description: "cancelled: stopped by POST …/cancel; its report covers the attempts that finished",
});

const Usage = ref(UsageView);

const JudgeRunView = Type.Object({
  runId: Type.String({ description: "the judge's stored run (GET /api/judge-runs/:id)" }),
  usage: Usage,
  estimatedCostUsd: Nullable(Type.Number({ description: "null when the judge's model has no price" })),
});

const AttemptView = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  outcome: OneOf(["pass", "fail", "error"]),
  runId: Nullable(Type.String()),
  latencyMs: Type.Integer(),
  estimatedCostUsd: Nullable(Type.Number()),
  usage: Nullable(Usage),
  judgeRuns: Type.Array(JudgeRunView),
});

const AssertionResultView = Type.Object({
  type: OneOf(Object.keys(ASSERTION_FIELDS)),
  passed: Type.Boolean(),
  message: Type.String(),
});

const TargetResultView = Type.Object({
  outcome: OneOf(["pass", "fail", "error"], {
    description:
      "over every attempt: pass when all passed, error when none could run, else fail; error: the skill run failed, or could not be started",
  }),
  runId: Nullable(Type.String({ description: "the skill run (GET /api/skill-runs/:id); null when none was stored" })),
  output: OutputView,
  assertions: Type.Array(AssertionResultView),
  contractValid: Nullable(
    Type.Boolean({ description: "the output conforms to the version's output schema; null without an output" }),
  ),
  latencyMs: Type.Integer(),
  estimatedCostUsd: Nullable(Type.Number()),
  usage: Nullable(Usage),
  judgeRuns: Type.Array(JudgeRunView, { description: "the llm_judge calls that graded the first attempt" }),
  error: Type.Optional(ref(RunErrorView)),
  attempts: Type.Array(AttemptView, { description: "every attempt, in order; runId etc. above are the first's" }),
  passRate: Type.Number({ description: "passing attempts / attempts" }),
  verdict: OneOf(["passed", "failed", "flaky"], { description: "every attempt passed, none did, or some did" }),
});

const Change = Nullable(OneOf(["unchanged", "fixed", "regressed", "output_changed"]), {
  description:
    "with two targets, the live one (published or production, else the first named) before and the other after (draft against published: published before): fixed / regressed when the pass rate rose / dropped by at least 0.25, else unchanged or output_changed by the first attempts' outputs; null with one target",
});

const TargetSummaryView = Type.Object({
  passed: Type.Integer(),
  failed: Type.Integer(),
  errored: Type.Integer(),
  flaky: Type.Integer({ description: "cases whose attempts disagree (counted in failed too)" }),
  passRate: Type.Number({ description: "the mean of the cases' pass rates, 0 to 1" }),
  attempts: Type.Integer(),
  avgLatencyMs: Type.Number(),
  latencyMs: Type.Object({ p50: Type.Number(), p95: Type.Number(), p99: Type.Number() }),
  usage: Usage,
  totalCostUsd: Nullable(Type.Number({ description: "skill and judge runs; null when any is unpriced" })),
  pricedCostUsd: Type.Number({ description: "what the priced runs cost" }),
  unpricedRuns: Type.Integer({ description: "runs of a model without a price, left out of pricedCostUsd" }),
  judge: Type.Object({ runs: Type.Integer(), usage: Usage, estimatedCostUsd: Nullable(Type.Number()) }),
});

const ChangesView = Type.Object({
  fixed: Type.Integer(),
  regressed: Type.Integer(),
  outputChanged: Type.Integer(),
  unchanged: Type.Integer(),
  stillFailing: Type.Integer({ description: "failed every attempt before and after (also counted above)" }),
  flaky: Type.Integer({ description: "flaky after (also counted above)" }),
});

const SummaryView = Type.Object({
  repeats: Type.Integer({ description: "attempts per case and target" }),
  byTarget: Type.Record(Type.String(), TargetSummaryView),
  changes: ChangesView,
  text: Type.String({ description: "the summary in one line" }),
});

const ContractValidityView = Type.Object({
  valid: Type.Boolean(),
  violations: Type.Array(
    Type.Object({
      caseId: Type.Optional(Type.String()),
      target: TargetLabel,
      kind: OneOf(["output_schema"]),
      message: Type.String(),
    }),
  ),
  breakingChanges: Type.Array(
    Type.Object({
      kind: OneOf(["input_required_added", "input_type_changed", "output_field_removed", "output_type_changed"]),
      path: Type.String(),
      message: Type.String(),
    }),
  ),
});

export const EvaluationRunView = Type.Object(
  {
    id: Type.String(),
    evaluationRunId: Type.String({ description: "equal to id" }),
    skillId: Type.String(),
    status: EvaluationStatus,
    repeats: Type.Integer({ minimum: 1, maximum: 20 }),
    targets: Type.Array(Type.Object({ label: TargetLabel, skillVersionId: Type.String() })),
    results: Type.Array(
      Type.Object({
        caseId: Type.String(),
        byTarget: Type.Record(Type.String(), TargetResultView, {
          description: "by target: draft, published or a label",
        }),
        change: Change,
      }),
      { description: "one per case, in the order of the cases; filled in while the run is running" },
    ),
    summary: Nullable(SummaryView, { description: "null until the run has completed (or was cancelled)" }),
    contractValidity: Nullable(ContractValidityView, {
      description: "null until the run has completed (or was cancelled)",
    }),
    createdAt: Timestamp,
    completedAt: Nullable(Timestamp, { description: "when it completed or was cancelled" }),
  },
  { $id: "EvaluationRun" },
);

const ComparedSideView = Nullable(
  Type.Object({
    outcome: OneOf(["pass", "fail", "error"]),
    verdict: OneOf(["passed", "failed", "flaky"]),
    passRate: Type.Number(),
    attempts: Type.Integer(),
    runId: Nullable(Type.String({ description: "the first attempt's skill run" })),
  }),
  { description: "null when the case is not in that run" },
);

const ComparedRunView = Type.Object({
  evaluationRunId: Type.String(),
  target: TargetLabel,
  skillVersionId: Type.String(),
  repeats: Type.Integer(),
});

export const EvaluationComparisonView = Type.Object(
  {
    base: ComparedRunView,
    head: ComparedRunView,
    results: Type.Array(
      Type.Object({
        caseId: Type.String(),
        base: ComparedSideView,
        head: ComparedSideView,
        change: Change,
      }),
      { description: "head's cases in order, then those only base has" },
    ),
    summary: Type.Object({ changes: ChangesView, text: Type.String() }),
  },
  { $id: "EvaluationComparison" },
);

// biome-ignore lint/suspicious/noExplicitAny: the service's result JSON is read field by field below.
type Loose = any;

/** A JSON object of the run that is "{}" until the run completes: null then. */
function completedPart(text: string): Loose {
  const value = parseJson(text);
  return isObject(value) && Object.keys(value).length > 0 ? value : null;
}

const usageView = (u: Loose) =>
  isObject(u) ? { inputTokens: Number(u.inputTokens ?? 0), outputTokens: Number(u.outputTokens ?? 0) } : null;

const judgeRunsView = (runs: Loose) =>
  Array.isArray(runs)
    ? runs.map((j: Loose) => ({
        runId: String(j.runId ?? ""),
        usage: usageView(j.usage) ?? { inputTokens: 0, outputTokens: 0 },
        estimatedCostUsd: typeof j.estimatedCostUsd === "number" ? j.estimatedCostUsd : null,
      }))
    : [];

function targetResultView(r: Loose) {
  const passRate = typeof r.passRate === "number" ? r.passRate : r.outcome === "pass" ? 1 : 0;
  return {
    outcome: r.outcome,
    runId: r.runId || null,
    output: r.output ?? null,
    assertions: Array.isArray(r.assertions)
      ? r.assertions.map((a: Loose) => ({ type: a.type, passed: a.passed === true, message: a.message ?? "" }))
      : [],
    contractValid: typeof r.contractValid === "boolean" ? r.contractValid : null,
    latencyMs: Math.round(Number(r.latencyMs ?? 0)),
    estimatedCostUsd: typeof r.estimatedCostUsd === "number" ? r.estimatedCostUsd : null,
    usage: usageView(r.usage),
    judgeRuns: judgeRunsView(r.judgeRuns),
    ...(isObject(r.error) ? { error: { code: String(r.error.code), message: String(r.error.message) } } : {}),
    // Reports stored before repeats existed: one attempt.
    attempts: Array.isArray(r.attempts)
      ? r.attempts.map((a: Loose) => ({
          attempt: Number(a.attempt),
          outcome: a.outcome,
          runId: a.runId || null,
          latencyMs: Math.round(Number(a.latencyMs ?? 0)),
          estimatedCostUsd: typeof a.estimatedCostUsd === "number" ? a.estimatedCostUsd : null,
          usage: usageView(a.usage),
          judgeRuns: judgeRunsView(a.judgeRuns),
        }))
      : [
          {
            attempt: 1,
            outcome: r.outcome,
            runId: r.runId || null,
            latencyMs: Math.round(Number(r.latencyMs ?? 0)),
            estimatedCostUsd: typeof r.estimatedCostUsd === "number" ? r.estimatedCostUsd : null,
            usage: usageView(r.usage),
            judgeRuns: judgeRunsView(r.judgeRuns),
          },
        ],
    passRate,
    verdict: (r.verdict ?? (passRate >= 1 ? "passed" : passRate <= 0 ? "failed" : "flaky")) as
      | "passed"
      | "failed"
      | "flaky",
  };
}

/** A stored summary; one stored before repeats and totals existed gets their neutral values. */
function summaryView(s: Loose) {
  if (!s) return null;
  const zeroUsage = { inputTokens: 0, outputTokens: 0 };
  return {
    repeats: Number(s.repeats ?? 1),
    byTarget: Object.fromEntries(
      Object.entries((s.byTarget ?? {}) as Record<string, Loose>).map(([label, t]) => [
        label,
        {
          passed: t.passed,
          failed: t.failed,
          errored: t.errored,
          flaky: t.flaky ?? 0,
          passRate: t.passRate,
          attempts: t.attempts ?? t.passed + t.failed + t.errored,
          avgLatencyMs: t.avgLatencyMs,
          latencyMs: t.latencyMs ?? { p50: t.avgLatencyMs, p95: t.avgLatencyMs, p99: t.avgLatencyMs },
          usage: t.usage ?? zeroUsage,
          totalCostUsd: t.totalCostUsd ?? null,
          pricedCostUsd: t.pricedCostUsd ?? t.totalCostUsd ?? 0,
          unpricedRuns: t.unpricedRuns ?? 0,
          judge: t.judge ?? { runs: 0, usage: zeroUsage, estimatedCostUsd: 0 },
        },
      ]),
    ),
    changes: { stillFailing: 0, flaky: 0, ...s.changes },
    text: s.text,
  };
}

export function evaluationRunView(run: EvaluationRun | undefined) {
  if (!run) throw new Error("evaluation returned no run");
  const results = (parseJson(run.resultsJson) as Loose[] | null) ?? [];
  return {
    id: run.id,
    evaluationRunId: run.id,
    skillId: run.skillId,
    status: run.status as EvaluationStatus,
    repeats: run.repeats || 1,
    targets: run.targets.map((t) => ({ label: t.label, skillVersionId: t.skillVersionId })),
    results: results.map((r) => ({
      caseId: r.caseId,
      byTarget: Object.fromEntries(
        Object.entries((r.byTarget ?? {}) as Record<string, Loose>).map(([label, t]) => [label, targetResultView(t)]),
      ),
      change: r.change ?? null,
    })),
    summary: summaryView(completedPart(run.summaryJson)),
    contractValidity: completedPart(run.contractValidityJson),
    createdAt: iso(run.createdAt) ?? "",
    completedAt: iso(run.completedAt),
  };
}

/**
 * The organization of a read addressed by the skill: the one given, else an API key's own, else
 * "" (the evaluation service takes the skill's).
 */
function organizationOfRead(request: FastifyRequest, given: string | undefined): string {
  if (given) return given;
  const principal = principalOf(request);
  return principal.type === "api_key" ? principal.organizationId : "";
}

const CasesQuerystring = Type.Object(
  {
    organizationId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: "default: the skill's organization" }),
    ),
    ...ListQuery,
  },
  { additionalProperties: false },
);

const RunParams = Type.Object({ id: Id, evaluationRunId: Id });

/** Evaluation cases and runs of a skill (api.md "Evaluations"). */
export function registerEvaluationRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { evaluation } = deps.clients;

  app.get(
    "/api/skills/:id/evaluation-cases",
    {
      config,
      schema: {
        tags,
        operationId: "listEvaluationCases",
        summary: "List a skill's evaluation cases, newest first",
        params: IdParams,
        querystring: CasesQuerystring,
        response: { 200: List(ref(EvaluationCaseView)), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const q = request.query;
      const r = await evaluation.listEvaluationCases(
        {
          organizationId: organizationOfRead(request, q.organizationId),
          skillId: request.params.id,
          limit: q.limit ? Number(q.limit) : 0,
          cursor: q.cursor ?? "",
        },
        rpcOptions(request),
      );
      return { data: r.cases.map(evaluationCaseView), nextCursor: r.nextCursor || null };
    },
  );

  app.post(
    "/api/skills/:id/evaluation-cases",
    {
      config,
      schema: {
        tags,
        operationId: "createEvaluationCases",
        summary: "Create a batch of evaluation cases for a skill",
        params: IdParams,
        headers: IdempotencyHeaders,
        body: Body({
          organizationId: Type.Optional(OrganizationId),
          cases: Type.Array(NewCase, { minItems: 1, maxItems: LIMITS.casesPerRequest }),
        }),
        response: { 201: List(ref(EvaluationCaseView)), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const r = await evaluation.createEvaluationCases(
        {
          organizationId: organizationOf(request, b.organizationId),
          skillId: request.params.id,
          cases: b.cases.map((c) => ({
            name: c.name,
            inputJson: jsonTextOf(c.input),
            // null means "none", like every optional field of a create.
            expectedOutputJson: c.expectedOutput === null ? undefined : jsonText(c.expectedOutput),
            assertionsJson: jsonText(c.assertions),
          })),
        },
        rpcOptions(request),
      );
      return reply.code(201).send({ data: r.cases.map(evaluationCaseView), nextCursor: null });
    },
  );

  app.put(
    "/api/skills/:id/evaluation-cases/:caseId",
    {
      config,
      schema: {
        tags,
        operationId: "updateEvaluationCase",
        summary:
          "Replace an evaluation case's name, input, expected output and assertions (runs started after use them)",
        params: Type.Object({ id: Id, caseId: Id }),
        body: Body({ organizationId: Type.Optional(OrganizationId), ...NewCase.properties }),
        response: { 200: ref(EvaluationCaseView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { organizationId, ...c } = request.body;
      const r = await evaluation.updateEvaluationCase(
        {
          organizationId: organizationOf(request, organizationId),
          skillId: request.params.id,
          caseId: request.params.caseId,
          evaluationCase: {
            name: c.name,
            inputJson: jsonTextOf(c.input),
            expectedOutputJson: c.expectedOutput === null ? undefined : jsonText(c.expectedOutput),
            assertionsJson: jsonText(c.assertions),
          },
        },
        rpcOptions(request),
      );
      if (!r.evaluationCase) throw new Error("evaluation returned no case");
      return evaluationCaseView(r.evaluationCase);
    },
  );

  app.post(
    "/api/skills/:id/evaluations/run",
    {
      config,
      schema: {
        tags,
        operationId: "startEvaluationRun",
        summary:
          "Start an evaluation run of the skill's cases (or caseIds) against its draft and/or published version; poll the run",
        params: IdParams,
        headers: IdempotencyHeaders,
        body: Body({
          organizationId: Type.Optional(OrganizationId),
          targets: Type.Optional(
            Type.Array(TargetLabel, {
              minItems: 1,
              maxItems: 2,
              uniqueItems: true,
              description:
                "draft, published and/or labels of the skill (docs/labels.md); default: whichever of draft and published exist; naming one that does not is 409",
            }),
          ),
          caseIds: Type.Optional(
            Type.Array(Id, { minItems: 1, maxItems: 500, uniqueItems: true, description: "default: every case" }),
          ),
          repeats: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 20,
              description: "attempts per case and target (default 1): each case gets a pass rate and a verdict",
            }),
          ),
        }),
        response: {
          202: Type.Object({
            id: Type.String(),
            evaluationRunId: Type.String({ description: "equal to id" }),
            status: Type.Literal("queued"),
          }),
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const r = await evaluation.startEvaluationRun(
        {
          organizationId: organizationOf(request, b.organizationId),
          skillId: request.params.id,
          targets: b.targets ?? [],
          caseIds: b.caseIds ?? [],
          repeats: b.repeats ?? 0,
        },
        rpcOptions(request),
      );
      if (!r.run) throw new Error("evaluation returned no run");
      return reply.code(202).send({ id: r.run.id, evaluationRunId: r.run.id, status: "queued" as const });
    },
  );

  app.get(
    "/api/skills/:id/evaluations/compare",
    {
      config,
      schema: {
        tags,
        operationId: "compareEvaluationRuns",
        summary:
          "Compare two completed evaluation runs of the skill case by case: base and head verdicts and pass rates, the change, the summary",
        params: IdParams,
        querystring: Type.Object(
          {
            base: Id,
            head: Id,
            target: Type.Optional(
              Type.String({
                pattern: "^[a-z][a-z0-9-]{0,39}$",
                description: "default: the first target of base that head has too (draft first)",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: ref(EvaluationComparisonView), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const q = request.query;
      const r = await evaluation.compareEvaluationRuns(
        {
          organizationId: organizationOfRead(request, undefined),
          skillId: request.params.id,
          baseEvaluationRunId: q.base,
          headEvaluationRunId: q.head,
          target: q.target ?? "",
        },
        rpcOptions(request),
      );
      return parseJson(r.comparisonJson) as Static<typeof EvaluationComparisonView>;
    },
  );

  app.post(
    "/api/skills/:id/evaluations/:evaluationRunId/cancel",
    {
      config,
      schema: {
        tags,
        operationId: "cancelEvaluationRun",
        summary:
          "Cancel an evaluation run: pending attempts are not run; the report keeps what finished and says it was cancelled",
        params: RunParams,
        response: { 200: ref(EvaluationRunView), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request) => {
      const r = await evaluation.cancelEvaluationRun(
        {
          organizationId: organizationOfRead(request, undefined),
          skillId: request.params.id,
          evaluationRunId: request.params.evaluationRunId,
        },
        rpcOptions(request),
      );
      return evaluationRunView(r.run);
    },
  );

  app.get(
    "/api/skills/:id/evaluations/:evaluationRunId",
    {
      config,
      schema: {
        tags,
        operationId: "getEvaluationRun",
        summary: "An evaluation run: per-case outcomes by target, changes, summary and contract validity",
        params: RunParams,
        response: { 200: ref(EvaluationRunView), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const r = await evaluation.getEvaluationRun(
        {
          organizationId: organizationOfRead(request, undefined),
          skillId: request.params.id,
          evaluationRunId: request.params.evaluationRunId,
        },
        rpcOptions(request),
      );
      return evaluationRunView(r.run);
    },
  );
}
