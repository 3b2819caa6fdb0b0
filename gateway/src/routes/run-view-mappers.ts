/** Run messages as the REST API shows them (docs/api.md "Runs"): JSON text parsed, int64 numbers. */
import type { JsonText } from "@kiln/kit/json-text";
import type { CompareAgentRunsResponse, Run, RunStep, ToolCall, Usage } from "@kiln/proto/execution";
import { parseJson } from "./catalog-views.js";
import { answersOf, iso } from "./views.js";

type Output = { text: string; json?: unknown };
/** A JsonText's value; null when it is unset (no output: the run or step failed). */
const jsonValue = (t: JsonText | undefined): unknown => (t === undefined ? null : parseJson(t.json));
const outputOf = (t: JsonText | undefined) => jsonValue(t) as Output | null;

/** An error the run or step ended with, when it failed. */
const errorView = (e: { code: string; message: string } | undefined) =>
  e?.code ? { error: { code: e.code, message: e.message } } : {};

export const toolCallView = (c: ToolCall) => ({
  toolKey: c.toolKey,
  toolVersionId: c.toolVersionId,
  input: jsonValue(c.input),
  output: jsonValue(c.output),
  latencyMs: Number(c.latencyMs),
  ...errorView(c.error),
});

/**
 * A run that reached no model (a failed preview, a tool step) carries no usage: zero tokens. A
 * class the provider did not report is left out. Evaluation's Usage has the same fields.
 */
export const usageView = (u: Pick<Usage, "inputTokens" | "outputTokens" | UsagePart> | undefined) => {
  if (!u) return { inputTokens: 0, outputTokens: 0 };
  const view: { inputTokens: number; outputTokens: number } & Partial<Record<UsagePart, number>> = {
    inputTokens: Number(u.inputTokens),
    outputTokens: Number(u.outputTokens),
  };
  for (const key of USAGE_PARTS) {
    const n = u[key];
    if (n !== undefined) view[key] = Number(n);
  }
  return view;
};
const USAGE_PARTS = ["cachedInputTokens", "cacheWriteInputTokens", "reasoningTokens"] as const;
type UsagePart = (typeof USAGE_PARTS)[number];

/** `{ costNotes }` when the estimate assumed something (a run's or step's `costNotes`). */
export const costNotesView = (notes: readonly string[]) =>
  notes.length > 0 ? { costNotes: notes as "cached_input_priced_as_input"[] } : {};

/** What a run and each of its steps say of their model call: provider, model, usage, cost, latency, tool calls, error. */
const callView = (c: Run | RunStep) => ({
  provider: c.provider ?? null,
  model: c.model ?? null,
  usage: usageView(c.usage),
  estimatedCostUsd: c.estimatedCostUsd ?? null,
  ...costNotesView(c.costNotes),
  latencyMs: Number(c.latencyMs),
  toolCalls: c.toolCalls.map(toolCallView),
  ...errorView(c.error),
});

/** The fields every step shares: its status, input and output, its call and whether a rerun reused it. */
const stepFieldsView = (s: RunStep) => ({
  stepId: s.stepId,
  status: s.status as "succeeded" | "failed",
  input: jsonValue(s.input),
  output: outputOf(s.output),
  ...callView(s),
  reused: s.reused,
});

const stepView = (s: RunStep) => ({
  ...stepFieldsView(s),
  alias: s.stepId,
  type: "prompt" as const,
  promptId: s.promptId,
  promptVersionId: s.promptVersionId,
});

/**
 * Calls per toolKey, in the order the tools were first called. protobuf-es drops a map entry keyed
 * "__proto__" (a valid toolKey) on its way through the RPC, so a key the map lost is counted again
 * from the run's tool calls; Object.fromEntries keeps it an own property.
 */
function toolCallCountsView(r: Run): Record<string, number> {
  const fromMap = new Map(Object.entries(r.toolCallCounts).map(([k, v]): [string, number] => [k, Number(v)]));
  const tally = new Map<string, number>();
  for (const c of r.toolCalls) tally.set(c.toolKey, (tally.get(c.toolKey) ?? 0) + 1);
  const counts = new Map<string, number>();
  for (const [key, n] of tally) counts.set(key, fromMap.get(key) ?? n);
  for (const [key, n] of fromMap) if (!counts.has(key)) counts.set(key, n);
  return Object.fromEntries(counts);
}

/** A run view of the run an execution response carries (an error when it carries none). */
const { view } = answersOf("execution");

const attemptView = (a: Run["attempts"][number]) => ({
  model: a.model,
  status: a.status as "succeeded" | "failed" | "skipped",
  latencyMs: Number(a.latencyMs),
  ...(a.error ? { error: { code: a.error.code, message: a.error.message } } : {}),
});

/** The fields every run kind shares. */
function runFieldsView<K extends string>(r: Run, kind: K) {
  return {
    kind,
    organizationId: r.organizationId,
    status: r.status as "succeeded" | "failed",
    input: jsonValue(r.input),
    output: outputOf(r.output),
    ...callView(r),
    toolCallCount: Number(r.toolCallCount),
    toolCallCounts: toolCallCountsView(r),
    ...(r.label ? { label: r.label } : {}),
    ...(r.evaluationRunId ? { evaluationRunId: r.evaluationRunId } : {}),
    ...(r.route ? { route: r.route, attempts: r.attempts.map(attemptView) } : {}),
    createdAt: iso(r.createdAt) ?? "",
    completedAt: iso(r.completedAt) ?? "",
  };
}

export const judgeRunView = view("run", (r: Run) => ({ id: r.id, ...runFieldsView(r, "judge") }));

export const modelRunView = view("run", (r: Run) => ({
  id: r.id,
  ...runFieldsView(r, "model"),
  ...(r.cache && { cache: runCacheView(r.cache) }),
}));

export const promptRunView = view("run", (r: Run) => ({
  id: r.id,
  ...runFieldsView(r, "prompt"),
  promptId: r.promptId,
  promptVersionId: r.promptVersionId,
  ...(r.promptVersionId === "" && { draft: true as const }),
  ...(r.cache && { cache: runCacheView(r.cache) }),
}));

/**
 * A hit: `{status, savedCostUsd, sourceRunId}`; a miss: `{status}`; both with the TTL and where it
 * came from (`ttlSeconds`, `ttlSource`) unless the run was stored before they were kept.
 */
function runCacheView(c: NonNullable<Run["cache"]>) {
  const status = c.status as "hit" | "miss";
  const ttl =
    c.ttlSource === "" ? {} : { ttlSeconds: c.ttlSeconds, ttlSource: c.ttlSource as "request" | "label" | "version" };
  return status === "hit"
    ? { status, savedCostUsd: c.savedCostUsd ?? null, sourceRunId: c.sourceRunId, ...ttl }
    : { status, ...ttl };
}

function skillRunFieldsView(r: Run) {
  return {
    ...runFieldsView(r, "skill"),
    skillId: r.skillId,
    skillVersionId: r.skillVersionId,
    steps: r.steps.map(stepView),
  };
}

export const skillRunView = view("run", (r: Run) => ({ id: r.id, ...skillRunFieldsView(r) }));

export const skillPreviewView = view("preview", (r: Run) => ({
  id: null,
  ...skillRunFieldsView(r),
  preview: true as const,
}));

/** A step of an agent run (api.md "Agents": `runId` names the child run; `reused` on a rerun). */
export const agentStepView = (s: RunStep) => ({
  ...stepFieldsView(s),
  type: s.type as "prompt" | "skill" | "tool",
  ...(s.runId ? { runId: s.runId } : {}),
});

/**
 * An agent run: the shared run shape plus `agentId, agentVersionId, steps, parentRunId?,
 * rerunFromStepId?` (api.md "Runs"); `completedAt` is null while an asynchronous run is running.
 */
export const agentRunView = view("run", (r: Run) => ({
  id: r.id,
  ...runFieldsView(r, "agent"),
  status: r.status as "succeeded" | "failed" | "running",
  completedAt: r.status === "running" ? null : (iso(r.completedAt) ?? ""),
  agentId: r.agentId,
  agentVersionId: r.agentVersionId,
  steps: r.steps.map(agentStepView),
  ...(r.parentRunId ? { parentRunId: r.parentRunId, rerunFromStepId: r.rerunFromStepId } : {}),
}));

/**
 * The comparison of agent runs (api.md "Agent runs"): `byRun` and `totals` keyed by run id in the
 * order of `runs`; a run that did not execute a step shows null.
 */
export function agentRunComparisonView(c: CompareAgentRunsResponse) {
  return {
    runs: c.runs.map((r) => ({
      id: r.id,
      agentId: r.agentId,
      agentVersionId: r.agentVersionId,
      status: r.status as "succeeded" | "failed" | "running",
      createdAt: iso(r.createdAt) ?? "",
    })),
    steps: c.steps.map((s) => ({
      stepId: s.stepId,
      byRun: Object.fromEntries(
        c.runs.map(({ id }) => {
          const step = s.byRun[id];
          return [
            id,
            step
              ? {
                  status: step.status as "succeeded" | "failed",
                  output: outputOf(step.output),
                  usage: usageView(step.usage),
                  latencyMs: Number(step.latencyMs),
                }
              : null,
          ];
        }),
      ),
      outputsEqual: s.outputsEqual,
    })),
    totals: Object.fromEntries(
      c.runs.flatMap(({ id }) => {
        const t = c.totals[id];
        if (!t) return [];
        const totals = {
          usage: usageView(t.usage),
          estimatedCostUsd: t.estimatedCostUsd ?? null,
          latencyMs: Number(t.latencyMs),
        };
        return [[id, totals]];
      }),
    ),
  };
}
