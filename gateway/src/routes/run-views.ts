/** The view schemas of runs: prompt, skill, judge runs and previews (docs/api.md "Runs"). */
import Type from "typebox";
import { Nullable, OneOf, ref, Timestamp } from "../schemas.js";
import { FreeJson } from "./catalog-views.js";

const part = (of: string) =>
  Type.Optional(Type.Integer({ description: `part of ${of}; absent when the provider did not report it` }));

/** Token counts by class (docs/providers.md "How usage is priced"). */
export const UsageView = Type.Object(
  {
    inputTokens: Type.Integer({ description: "every input token, cached and cache-written ones included" }),
    outputTokens: Type.Integer({ description: "every output token, reasoning included" }),
    cachedInputTokens: part("inputTokens read from the provider's prompt cache"),
    cacheWriteInputTokens: part("inputTokens written to the provider's prompt cache"),
    reasoningTokens: part("outputTokens spent on reasoning"),
  },
  { $id: "Usage", description: "whitespace-separated words for local/echo" },
);

/** What a cost estimate assumed (docs/providers.md "How usage is priced"); absent when nothing. */
export const CostNotesView = Type.Optional(
  Type.Array(OneOf(["cached_input_priced_as_input"]), {
    description:
      "cached_input_priced_as_input: cached input tokens were priced at the input price, the model's cached-input price being unknown",
  }),
);
export const RunErrorView = Type.Object({ code: Type.String(), message: Type.String() }, { $id: "RunError" });
export const RunOutputView = Type.Object(
  {
    text: Type.String(),
    json: Type.Optional(FreeJson),
  },
  { $id: "RunOutput", description: "json is there when the response format is json_schema" },
);
export const OutputView = Nullable(ref(RunOutputView), { description: "null when the run failed" });

export const ToolCallView = Type.Object(
  {
    toolKey: Type.String(),
    toolVersionId: Type.String(),
    input: FreeJson,
    output: Type.Unknown({ description: "the tool's JSON output; null when the call failed" }),
    latencyMs: Type.Integer(),
    error: Type.Optional(ref(RunErrorView)),
  },
  { $id: "ToolCall" },
);

export const RunStatus = OneOf(["succeeded", "failed"]);

export const RouteAttemptView = Type.Object(
  {
    model: Type.String({ description: "the target's model id" }),
    status: OneOf(["succeeded", "failed", "skipped"], { description: "skipped: its circuit breaker was open" }),
    latencyMs: Type.Integer(),
    error: Type.Optional(ref(RunErrorView)),
  },
  { $id: "RouteAttempt", description: 'one call of a model route\'s target (docs/providers.md "Routes")' },
);

/** What every step of a multi-step run records of its execution (api.md "Runs"). */
export const STEP_EXECUTION_FIELDS = {
  provider: Nullable(Type.String()),
  model: Nullable(Type.String()),
  usage: ref(UsageView),
  estimatedCostUsd: Nullable(Type.Number()),
  costNotes: CostNotesView,
  latencyMs: Type.Integer(),
  toolCalls: Type.Array(ref(ToolCallView)),
  error: Type.Optional(ref(RunErrorView)),
};

export const SkillRunStepView = Type.Object(
  {
    stepId: Type.String({ description: "the composition alias" }),
    alias: Type.String(),
    type: OneOf(["prompt"]),
    status: RunStatus,
    input: FreeJson,
    output: OutputView,
    promptId: Type.String(),
    promptVersionId: Type.String(),
    ...STEP_EXECUTION_FIELDS,
    reused: Type.Boolean(),
  },
  { $id: "SkillRunStep" },
);

/** The fields every run kind shares (api.md "Runs"); each kind adds its own. */
export const RunCommonFields = {
  organizationId: Type.String(),
  status: RunStatus,
  input: FreeJson,
  output: OutputView,
  provider: Nullable(Type.String({ description: "null when the steps used different providers" })),
  model: Nullable(Type.String({ description: "null when the steps used different models" })),
  usage: ref(UsageView),
  estimatedCostUsd: Nullable(Type.Number({ description: "null when a model without a price took part" })),
  costNotes: CostNotesView,
  latencyMs: Type.Integer(),
  toolCallCount: Type.Integer(),
  toolCallCounts: Type.Record(Type.String(), Type.Integer(), { description: "calls per toolKey" }),
  toolCalls: Type.Array(ref(ToolCallView)),
  error: Type.Optional(ref(RunErrorView)),
  label: Type.Optional(
    Type.String({ description: "the label the version was resolved through (labels, @label); absent when none" }),
  ),
  evaluationRunId: Type.Optional(
    Type.String({ description: "the evaluation run this run was made for (a case's skill run, an llm_judge call)" }),
  ),
  route: Type.Optional(
    Type.String({ description: "the model route the run went through (route/<name>); absent when none" }),
  ),
  attempts: Type.Optional(
    Type.Array(ref(RouteAttemptView), {
      description: "every call of the route's targets, in order; absent without a route",
    }),
  ),
  createdAt: Timestamp,
};

/** What the response cache did for a prompt run (docs/cache.md "The run's cache field"). */
export const RunCacheView = Type.Object(
  {
    status: OneOf(["hit", "miss"], { description: "hit: answered from the cache, no provider call, cost 0" }),
    savedCostUsd: Type.Optional(
      Nullable(Type.Number({ description: "a hit: what the answer cost when the model made it; null: no price" })),
    ),
    sourceRunId: Type.Optional(Type.String({ description: "a hit: the run whose answer was replayed" })),
    ttlSeconds: Type.Optional(Type.Integer({ description: "the TTL the run used the cache with, in seconds" })),
    ttlSource: Type.Optional(
      OneOf(["request", "label", "version"], {
        description:
          "where the TTL came from: the Kiln-Cache header, the default of the label the run went through, or the version's",
      }),
    ),
  },
  {
    $id: "RunCache",
    description:
      "absent when the run did not use the cache (no Kiln-Cache: ttl=… and no default of its label or version, or Kiln-Cache: no-store)",
  },
);

/** A stored prompt run (api.md "Runs"). */
export const PromptRunView = Type.Object(
  {
    id: Type.String(),
    kind: OneOf(["prompt"]),
    ...RunCommonFields,
    completedAt: Timestamp,
    promptId: Type.String(),
    promptVersionId: Type.String({ description: 'the version that ran; "" for a draft (an unsaved version)' }),
    draft: Type.Optional(
      Type.Literal(true, {
        description: "set when the run ran an unsaved version (the request's draft, kept in input.draft)",
      }),
    ),
    cache: Type.Optional(ref(RunCacheView)),
  },
  { $id: "PromptRun" },
);

const skillRunFields = {
  kind: OneOf(["skill"]),
  ...RunCommonFields,
  completedAt: Timestamp,
  skillId: Type.String(),
  skillVersionId: Type.String(),
  steps: Type.Array(ref(SkillRunStepView)),
};

/** A stored skill run (api.md "Runs", "Skills"). */
export const SkillRunView = Type.Object({ id: Type.String(), ...skillRunFields }, { $id: "SkillRun" });

/** The stored run of an llm_judge call of an evaluation: `input` is `{system, user}` (docs/api.md "Evaluations"). */
export const JudgeRunView = Type.Object(
  { id: Type.String(), kind: OneOf(["judge"]), ...RunCommonFields, completedAt: Timestamp },
  { $id: "JudgeRun" },
);

/**
 * A model run: the caller's messages sent to a model without a prompt, through `/v1/chat/completions`,
 * `/v1/responses` or `/v1/messages` with a model id that is not `kiln/…` (docs/openai-compatible.md
 * "Models"): `input` is `{messages, tools?, toolChoice?, responseFormat?, parameters?}`.
 */
export const ModelRunView = Type.Object(
  {
    id: Type.String(),
    kind: OneOf(["model"]),
    ...RunCommonFields,
    completedAt: Timestamp,
    cache: Type.Optional(ref(RunCacheView)),
  },
  { $id: "ModelRun" },
);

/** A skill preview: the skill run shape, stored nowhere (api.md "Skills"). */
export const SkillPreviewView = Type.Object(
  { id: Type.Null({ description: "a preview is not stored" }), ...skillRunFields, preview: Type.Literal(true) },
  { $id: "SkillPreview" },
);

/**
 * One event of `POST /api/prompts/{id}/run/stream` (docs/api.md "Streaming a prompt run"): the `data`
 * of each Server-Sent Event is one of these JSON objects, in this order: `start` once, `text` per
 * piece of the answer, then `done` with the stored run (succeeded, or failed: `cancelled` when the
 * client went away), or `error` when the stream broke off without a run.
 */
export const PromptRunStreamEventView = Type.Union(
  [
    Type.Object({ type: Type.Literal("start"), runId: Type.String() }),
    Type.Object({ type: Type.Literal("text"), delta: Type.String() }),
    Type.Object({ type: Type.Literal("done"), run: ref(PromptRunView) }),
    Type.Object({ type: Type.Literal("error"), error: ref(RunErrorView) }),
  ],
  { $id: "PromptRunStreamEvent" },
);
