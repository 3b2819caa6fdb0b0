import { jsonTextOf } from "@kiln/kit/json-text";
import { describe, expect, it } from "vitest";
import { runToProto } from "../rpc/run-proto.js";
import type { PromptExecution } from "./prompt-execution.js";
import { runDocOf } from "./run-record.js";

/** api.md "Runs": the record of a run, summed over its steps. */

type RunInput = Parameters<typeof runDocOf>[0];
type Step = RunInput["steps"][number];

const createdAt = new Date("2025-01-02T03:04:05.000Z");
const completedAt = new Date("2025-01-02T03:04:05.750Z");

function execution(over: Partial<PromptExecution> = {}): PromptExecution {
  return {
    status: "succeeded",
    output: { text: "answer" },
    provider: "openai",
    model: "openai/gpt-4o-mini",
    usage: { inputTokens: 10, outputTokens: 5 },
    estimatedCostUsd: 0.001,
    latencyMs: 12,
    toolCalls: [],
    ...over,
  };
}

function step(alias: string, exec: PromptExecution, input: Record<string, unknown> = {}): Step {
  return {
    stepId: alias,
    type: "prompt",
    status: exec.status,
    input,
    output: exec.output,
    promptId: `prm_${alias}`,
    promptVersionId: `pv_${alias}`,
    execution: exec,
  };
}

function skillRun(steps: Step[]) {
  return runDocOf({
    id: "srun_1",
    kind: "skill",
    organizationId: "org_a",
    input: { input: { city: "Paris" } },
    createdAt,
    completedAt,
    skillId: "skl_1",
    skillVersionId: "sv_1",
    steps,
  });
}

const call = (toolKey: string, extra: Record<string, unknown> = {}) => ({
  toolKey,
  toolVersionId: `tv_${toolKey}`,
  input: { city: "Paris" },
  output: { ok: true },
  latencyMs: 3,
  ...extra,
});

describe("runDocOf", () => {
  it("records a prompt run from its one execution", () => {
    const doc = runDocOf({
      id: "run_1",
      kind: "prompt",
      organizationId: "org_a",
      input: { variables: { city: "Paris" } },
      createdAt,
      completedAt,
      promptId: "prm_1",
      promptVersionId: "pv_1",
      steps: [],
      single: execution({ output: { text: '{"a":1}', json: { a: 1 } }, toolCalls: [call("weather")] }),
    });
    expect(doc).toEqual({
      _id: "run_1",
      kind: "prompt",
      organizationId: "org_a",
      status: "succeeded",
      inputJson: '{"variables":{"city":"Paris"}}',
      outputJson: '{"text":"{\\"a\\":1}","json":{"a":1}}',
      provider: "openai",
      model: "openai/gpt-4o-mini",
      usage: { inputTokens: 10, outputTokens: 5 },
      estimatedCostUsd: 0.001,
      latencyMs: 750,
      toolCallCount: 1,
      toolCallCounts: [{ toolKey: "weather", count: 1 }],
      toolCallsJson: JSON.stringify([call("weather")]),
      stepsJson: "[]",
      error: null,
      promptId: "prm_1",
      promptVersionId: "pv_1",
      skillId: "",
      skillVersionId: "",
      createdAt,
      completedAt,
    });
  });

  it("sums usage, cost and tool calls over the steps, and counts calls per toolKey", () => {
    const doc = skillRun([
      step(
        "a",
        execution({
          usage: { inputTokens: 100, outputTokens: 20 },
          estimatedCostUsd: 0.25,
          toolCalls: [call("weather"), call("news"), call("weather")],
        }),
      ),
      step("b", execution({ usage: { inputTokens: 7, outputTokens: 3 }, estimatedCostUsd: 0.5, toolCalls: [] })),
      step(
        "c",
        execution({
          usage: { inputTokens: 1, outputTokens: 2 },
          estimatedCostUsd: 0.125,
          toolCalls: [call("weather", { output: null, error: { code: "invalid_tool_input", message: "bad" } })],
        }),
      ),
    ]);
    expect(doc.usage).toEqual({ inputTokens: 108, outputTokens: 25 });
    expect(doc.estimatedCostUsd).toBe(0.875);
    expect(doc.toolCallCount).toBe(4);
    expect(doc.toolCallCounts).toEqual([
      { toolKey: "weather", count: 3 },
      { toolKey: "news", count: 1 },
    ]);
    expect(JSON.parse(doc.toolCallsJson).map((c: { toolKey: string }) => c.toolKey)).toEqual([
      "weather",
      "news",
      "weather",
      "weather",
    ]);
    expect(doc.status).toBe("succeeded");
    expect(doc.error).toBeNull();
  });

  it("sets provider and model only when every step agrees, each separately", () => {
    const same = skillRun([step("a", execution()), step("b", execution())]);
    expect([same.provider, same.model]).toEqual(["openai", "openai/gpt-4o-mini"]);
    const otherModel = skillRun([step("a", execution()), step("b", execution({ model: "openai/gpt-4o" }))]);
    expect([otherModel.provider, otherModel.model]).toEqual(["openai", null]);
    const otherProvider = skillRun([
      step("a", execution({ provider: "local", model: "local/echo" })),
      step("b", execution()),
    ]);
    expect([otherProvider.provider, otherProvider.model]).toEqual([null, null]);
    // Each step keeps its own.
    const steps = JSON.parse(otherProvider.stepsJson) as { provider: string; model: string }[];
    expect(steps.map((s) => [s.provider, s.model])).toEqual([
      ["local", "local/echo"],
      ["openai", "openai/gpt-4o-mini"],
    ]);
  });

  it("has a null cost when any step has no price, never a partial sum or 0", () => {
    expect(skillRun([step("a", execution({ estimatedCostUsd: null })), step("b", execution())]).estimatedCostUsd).toBe(
      null,
    );
    expect(skillRun([step("a", execution()), step("b", execution({ estimatedCostUsd: null }))]).estimatedCostUsd).toBe(
      null,
    );
    expect(
      skillRun([step("a", execution({ estimatedCostUsd: null })), step("b", execution({ estimatedCostUsd: null }))])
        .estimatedCostUsd,
    ).toBe(null);
    // A free model is a price: 0, not null.
    expect(
      skillRun([step("a", execution({ estimatedCostUsd: 0 })), step("b", execution({ estimatedCostUsd: 0 }))])
        .estimatedCostUsd,
    ).toBe(0);
  });

  it("is failed with the failing step's error and no output when a step failed", () => {
    const failed = execution({
      status: "failed",
      output: null,
      usage: { inputTokens: 4, outputTokens: 0 },
      estimatedCostUsd: 0.0001,
      error: { code: "provider_timeout", message: "openai did not answer in time" },
    });
    const doc = skillRun([step("a", execution({ output: { text: "first" } })), step("b", failed)]);
    expect(doc.status).toBe("failed");
    expect(doc.error).toEqual({ code: "provider_timeout", message: "openai did not answer in time" });
    expect(doc.outputJson).toBeNull();
    // What the steps did still counts.
    expect(doc.usage).toEqual({ inputTokens: 14, outputTokens: 5 });
    expect(doc.estimatedCostUsd).toBeCloseTo(0.0011, 12);
    const steps = JSON.parse(doc.stepsJson) as Record<string, unknown>[];
    expect(steps.map((s) => [s.stepId, s.status, s.error])).toEqual([
      ["a", "succeeded", null],
      ["b", "failed", { code: "provider_timeout", message: "openai did not answer in time" }],
    ]);
    expect(steps[1]?.output).toBeNull();
  });

  it("reports the first failing step's error when several failed", () => {
    const doc = skillRun([
      step("a", execution({ status: "failed", output: null, error: { code: "max_tool_rounds", message: "m" } })),
      step("b", execution({ status: "failed", output: null, error: { code: "provider_error", message: "p" } })),
    ]);
    expect(doc.error).toEqual({ code: "max_tool_rounds", message: "m" });
  });

  it("takes the run's output from the last step", () => {
    const doc = skillRun([
      step("a", execution({ output: { text: '{"x":1}', json: { x: 1 } } })),
      step("b", execution({ output: { text: "final words" } })),
    ]);
    expect(JSON.parse(doc.outputJson ?? "null")).toEqual({ text: "final words" });
    const json = skillRun([
      step("a", execution({ output: { text: "first" } })),
      step("b", execution({ output: { text: '{"y":2}', json: { y: 2 } } })),
    ]);
    expect(JSON.parse(json.outputJson ?? "null")).toEqual({ text: '{"y":2}', json: { y: 2 } });
  });

  it("keeps every step's own record in stepsJson", () => {
    const exec = execution({
      output: { text: "t", json: { t: 1 } },
      usage: { inputTokens: 3, outputTokens: 4 },
      estimatedCostUsd: null,
      latencyMs: 42,
      toolCalls: [call("weather")],
    });
    const doc = skillRun([step("a", exec, { city: "Paris" })]);
    expect(JSON.parse(doc.stepsJson)).toEqual([
      {
        stepId: "a",
        type: "prompt",
        status: "succeeded",
        input: { city: "Paris" },
        output: { text: "t", json: { t: 1 } },
        promptId: "prm_a",
        promptVersionId: "pv_a",
        provider: "openai",
        model: "openai/gpt-4o-mini",
        usage: { inputTokens: 3, outputTokens: 4 },
        estimatedCostUsd: null,
        latencyMs: 42,
        toolCalls: [call("weather")],
        error: null,
      },
    ]);
  });

  it("is failed when there is no step at all", () => {
    const doc = skillRun([]);
    expect(doc.status).toBe("failed");
    expect(doc.error?.code).toBe("no_output");
    expect([doc.provider, doc.model]).toEqual([null, null]);
  });

  it("keeps toolKeys such as __proto__ as data", () => {
    const doc = skillRun([step("a", execution({ toolCalls: [call("__proto__"), call("__proto__")] }))]);
    expect(doc.toolCallCounts).toEqual([{ toolKey: "__proto__", count: 2 }]);
    const proto = runToProto(doc);
    expect(Object.hasOwn(proto.toolCallCounts ?? {}, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(proto.toolCallCounts, "__proto__")?.value).toBe(2n);
  });
});

describe("runToProto", () => {
  it("carries every field, tool call errors without output, and the steps", () => {
    const failedCall = call("news", { output: null, error: { code: "http_error", message: "503" } });
    const doc = skillRun([
      step("a", execution({ toolCalls: [call("weather"), failedCall] }), { city: "Paris" }),
      step("b", execution({ status: "failed", output: null, error: { code: "provider_error", message: "down" } })),
    ]);
    const proto = runToProto(doc);
    expect(proto).toMatchObject({
      id: "srun_1",
      kind: "skill",
      organizationId: "org_a",
      status: "failed",
      input: jsonTextOf('{"input":{"city":"Paris"}}'),
      output: undefined,
      provider: "openai",
      model: "openai/gpt-4o-mini",
      usage: { inputTokens: 20n, outputTokens: 10n },
      estimatedCostUsd: 0.002,
      latencyMs: 750n,
      toolCallCount: 2n,
      toolCallCounts: { weather: 1n, news: 1n },
      error: { code: "provider_error", message: "down" },
      skillId: "skl_1",
      skillVersionId: "sv_1",
      preview: false,
    });
    expect(proto.toolCalls).toEqual([
      {
        toolKey: "weather",
        toolVersionId: "tv_weather",
        input: jsonTextOf('{"city":"Paris"}'),
        output: jsonTextOf('{"ok":true}'),
        latencyMs: 3n,
        error: undefined,
      },
      {
        toolKey: "news",
        toolVersionId: "tv_news",
        input: jsonTextOf('{"city":"Paris"}'),
        output: undefined,
        latencyMs: 3n,
        error: { code: "http_error", message: "503" },
      },
    ]);
    expect(proto.steps?.map((s) => [s.stepId, s.status, s.output?.json, s.error, s.input?.json])).toEqual([
      ["a", "succeeded", '{"text":"answer"}', undefined, '{"city":"Paris"}'],
      ["b", "failed", undefined, { code: "provider_error", message: "down" }, "{}"],
    ]);
    expect(runToProto(doc, true).preview).toBe(true);
  });

  it("leaves an unknown cost unset rather than 0", () => {
    const proto = runToProto(skillRun([step("a", execution({ estimatedCostUsd: null }))]));
    expect(proto.estimatedCostUsd).toBeUndefined();
    expect(proto.steps?.[0]?.estimatedCostUsd).toBeUndefined();
  });
});
