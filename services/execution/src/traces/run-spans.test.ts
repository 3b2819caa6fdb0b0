/**
 * A run's trace as recorded (its summary, built without its spans' attributes) and as read back (its
 * spans, built again from the run): the summary is the one its spans make, and the spans are the
 * same, ids included, every time they are built.
 */

import { createModelCatalog } from "@kiln/models/catalog";
import { describe, expect, it } from "vitest";
import type { RunDoc } from "../store/run-store.js";
import { runSpans, runTraceSummaryOf } from "./run-spans.js";
import { ownTraceOf, runTraceContextOf } from "./run-trace-context.js";
import { summaryOf } from "./trace-summary.js";

const models = createModelCatalog({ configuredProviders: ["openai"] });
const at = (ms: number) => new Date(Date.UTC(2026, 10, 27, 12, 0, 0, ms));

const base: RunDoc = {
  _id: "run_1",
  kind: "prompt",
  organizationId: "org_a",
  status: "succeeded",
  inputJson: '{"city":"Paris"}',
  outputJson: '"Sunny."',
  provider: "openai",
  model: "openai/gpt-4o-mini",
  usage: { inputTokens: 120, outputTokens: 30 },
  estimatedCostUsd: 0,
  latencyMs: 40,
  toolCallCount: 1,
  toolCallCounts: [{ toolKey: "weather", count: 1 }],
  toolCallsJson: JSON.stringify([
    { toolKey: "weather", input: { city: "Paris" }, output: { sky: "sun" }, latencyMs: 5 },
  ]),
  stepsJson: "[]",
  error: null,
  promptId: "prm_1",
  promptVersionId: "pv_1",
  skillId: "",
  skillVersionId: "",
  createdAt: at(0),
  completedAt: at(50),
};

const steps = (list: unknown[]) => JSON.stringify(list);
const RUNS: [string, RunDoc][] = [
  ["a priced prompt run with a tool call", base],
  ["a run with a label", { ...base, label: "production" }],
  [
    "a failed run on an unpriced model",
    {
      ...base,
      status: "failed",
      provider: "acme",
      model: "acme/mystery",
      outputJson: null,
      toolCallsJson: "[]",
      error: { code: "provider_error", message: "upstream 503" },
    },
  ],
  [
    "a skill run with a model step and a failed tool step",
    {
      ...base,
      kind: "skill",
      skillId: "skl_1",
      skillVersionId: "sv_1",
      stepsJson: steps([
        {
          stepId: "draft",
          type: "prompt",
          provider: "local",
          model: "local/echo",
          usage: { inputTokens: 3, outputTokens: 4 },
          latencyMs: 7,
          output: "hi",
        },
        {
          stepId: "lookup",
          type: "tool",
          latencyMs: 9,
          toolCalls: [
            {
              toolKey: "weather",
              input: {},
              output: null,
              latencyMs: 9,
              error: { code: "tool_error", message: "down" },
            },
          ],
        },
      ]),
    },
  ],
  [
    "an agent run with child runs and a reused step",
    {
      ...base,
      kind: "agent",
      agentId: "agt_1",
      agentVersionId: "av_1",
      stepsJson: steps([
        { stepId: "draft", type: "prompt", runId: "run_child", latencyMs: 12 },
        { stepId: "polish", type: "prompt", reused: true, latencyMs: 0 },
      ]),
    },
  ],
  ["a judge run without a model", { ...base, kind: "judge", model: null, provider: null, toolCallsJson: "[]" }],
];

describe("a run's trace", () => {
  it.each(RUNS)("%s: the summary recorded is the one its spans make", (_name, run) => {
    const trace = runTraceContextOf(undefined);
    const expiresAt = at(86_400_000);
    const recorded = runTraceSummaryOf(run, trace, models, expiresAt);
    expect(recorded).toEqual(summaryOf(runSpans(run, trace, models, expiresAt)));
    expect(recorded.runId).toBe(run._id);
  });

  it("gives a provider call the run's cached and reasoning tokens, priced per class like the run", () => {
    const usage = { inputTokens: 2_000, cachedInputTokens: 1_500, outputTokens: 400, reasoningTokens: 100 };
    const spans = runSpans({ ...base, usage, toolCallsJson: "[]" }, runTraceContextOf(undefined), models);
    const chat = spans.find((s) => s.name === "chat gpt-4o-mini");
    const attributes = JSON.parse(String(chat?.attributes)) as Record<string, unknown>;
    expect(attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 2_000,
      "gen_ai.usage.cache_read.input_tokens": 1_500,
      "gen_ai.usage.output_tokens": 400,
      "gen_ai.usage.reasoning.output_tokens": 100,
    });
    expect(attributes).not.toHaveProperty("gen_ai.usage.cache_creation.input_tokens");
    expect(chat?.generation?.costUsd).toBeCloseTo((500 * 0.15 + 1_500 * 0.075 + 400 * 0.6) / 1e6, 15);
  });

  it("builds the same spans, ids included, each time, under the root span its trace id gives", () => {
    const trace = runTraceContextOf(undefined);
    expect(trace).toEqual(ownTraceOf(trace.traceId));
    const run = RUNS[3]?.[1] as RunDoc;
    const spans = runSpans(run, trace, models);
    expect(runSpans(run, ownTraceOf(trace.traceId), models)).toEqual(spans);
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
    expect(spans.map((s) => s.name)).toEqual([
      "run_skill skl_1",
      "step draft",
      "chat echo",
      "step lookup",
      "execute_tool weather",
    ]);
    expect(spans.every((s) => /^[0-9a-f]{16}$/.test(s.spanId) && s.traceId === trace.traceId)).toBe(true);
    // Another trace, other ids.
    expect(runSpans(run, runTraceContextOf(undefined), models)[2]?.spanId).not.toBe(spans[2]?.spanId);
  });
});
