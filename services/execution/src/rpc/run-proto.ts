import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { jsonText, jsonTextOf } from "@kiln/kit/json-text";
import type { RunSchema } from "@kiln/proto/execution";
import type { RunDoc, UsageDoc } from "../store/run-store.js";

/** Usage as its message (execution's, events' and evaluation's share the fields): unreported classes stay unset. */
export const usageToProto = (usage: UsageDoc) => ({
  inputTokens: BigInt(usage.inputTokens),
  outputTokens: BigInt(usage.outputTokens),
  ...(usage.cachedInputTokens !== undefined ? { cachedInputTokens: BigInt(usage.cachedInputTokens) } : {}),
  ...(usage.cacheWriteInputTokens !== undefined ? { cacheWriteInputTokens: BigInt(usage.cacheWriteInputTokens) } : {}),
  ...(usage.reasoningTokens !== undefined ? { reasoningTokens: BigInt(usage.reasoningTokens) } : {}),
});

/** What a run used and cost, and what it ran: the fields Run and the RunCompleted event share. */
export function runSummaryToProto(run: RunDoc) {
  return {
    provider: run.provider ?? undefined,
    model: run.model ?? undefined,
    usage: usageToProto(run.usage),
    estimatedCostUsd: run.estimatedCostUsd ?? undefined,
    latencyMs: BigInt(run.latencyMs),
    toolCallCount: BigInt(run.toolCallCount),
    promptId: run.promptId,
    promptVersionId: run.promptVersionId,
    skillId: run.skillId,
    skillVersionId: run.skillVersionId,
    agentId: run.agentId ?? "",
    agentVersionId: run.agentVersionId ?? "",
    label: run.label ?? "",
    evaluationRunId: run.evaluationRunId ?? "",
  };
}

/** The proto of a stored (or previewed) run. */
export function runToProto(run: RunDoc, preview = false): MessageInitShape<typeof RunSchema> {
  const steps = JSON.parse(run.stepsJson) as Array<Record<string, unknown>>;
  const callOf = (c: {
    toolKey: string;
    toolVersionId: string;
    input: unknown;
    output: unknown;
    latencyMs: number;
    error?: { code: string; message: string };
  }) => ({
    toolKey: c.toolKey,
    toolVersionId: c.toolVersionId,
    input: jsonText(c.input ?? null),
    output: c.error ? undefined : jsonText(c.output ?? null),
    latencyMs: BigInt(c.latencyMs),
    error: c.error,
  });
  return {
    id: run._id,
    kind: run.kind,
    organizationId: run.organizationId,
    status: run.status,
    // The stored text as it is: no parse on the way out.
    input: jsonTextOf(run.inputJson),
    output: run.outputJson === null ? undefined : jsonTextOf(run.outputJson),
    ...runSummaryToProto(run),
    costNotes: run.costNotes ?? [],
    toolCallCounts: Object.fromEntries(run.toolCallCounts.map((c) => [c.toolKey, BigInt(c.count)])),
    toolCalls: (JSON.parse(run.toolCallsJson) as Parameters<typeof callOf>[0][]).map(callOf),
    error: run.error ?? undefined,
    createdAt: timestampFromDate(run.createdAt),
    // A running (asynchronous agent) run has not completed.
    completedAt: run.status === "running" ? undefined : timestampFromDate(run.completedAt),
    preview,
    parentRunId: run.parentRunId ?? "",
    rerunFromStepId: run.rerunFromStepId ?? "",
    attempts: (run.attempts ?? []).map((a) => ({ ...a, latencyMs: BigInt(a.latencyMs) })),
    route: run.route ?? "",
    cache: run.cache && {
      status: run.cache.status,
      // null: the answer had no price (unset on the wire).
      savedCostUsd: run.cache.savedCostUsd ?? undefined,
      sourceRunId: run.cache.sourceRunId ?? "",
      ttlSeconds: run.cache.ttlSeconds ?? 0,
      ttlSource: run.cache.ttlSource ?? "",
    },
    steps: steps.map((s) => {
      const usage = s.usage as UsageDoc;
      return {
        stepId: String(s.stepId),
        type: String(s.type),
        status: String(s.status),
        input: jsonText(s.input ?? {}),
        output: s.output ? jsonText(s.output) : undefined,
        provider: (s.provider as string | null) ?? undefined,
        model: (s.model as string | null) ?? undefined,
        usage: usageToProto(usage),
        estimatedCostUsd: (s.estimatedCostUsd as number | null) ?? undefined,
        costNotes: (s.costNotes as string[] | undefined) ?? [],
        latencyMs: BigInt(Number(s.latencyMs)),
        toolCalls: (s.toolCalls as Parameters<typeof callOf>[0][]).map(callOf),
        error: (s.error as { code: string; message: string } | null) ?? undefined,
        reused: s.reused === true,
        runId: String(s.runId ?? ""),
        promptId: String(s.promptId ?? ""),
        promptVersionId: String(s.promptVersionId ?? ""),
      };
    }),
  };
}
