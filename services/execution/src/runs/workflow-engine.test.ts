import { describe, expect, it } from "vitest";
import {
  bindStepInput,
  executeWorkflow,
  parseWorkflow,
  resolveAgentBinding,
  type StepResult,
  type Workflow,
  type WorkflowStep,
  workflowOutputOf,
} from "./workflow-engine.js";

const ok = (output: { text: string; json?: unknown }, extra: Partial<StepResult> = {}): StepResult => ({
  status: "succeeded",
  output,
  provider: "fake",
  model: "fake/default",
  usage: { inputTokens: 1, outputTokens: 1 },
  estimatedCostUsd: 0.001,
  latencyMs: 1,
  toolCalls: [],
  ...extra,
});

/** A step runner that answers from a table by step id and records what it was given. */
function scripted(answers: Record<string, (input: Record<string, unknown>) => StepResult>) {
  const calls: { stepId: string; input: Record<string, unknown> }[] = [];
  const run = async (step: WorkflowStep, input: Record<string, unknown>) => {
    calls.push({ stepId: step.id, input });
    const answer = answers[step.id];
    if (!answer) throw new Error(`no answer for ${step.id}`);
    return answer(input);
  };
  return { run, calls };
}

const step = (id: string, fields: Partial<WorkflowStep> = {}): WorkflowStep => ({
  id,
  type: "prompt",
  ref: {},
  input: {},
  ...fields,
});

describe("agent bindings", () => {
  const outputs = new Map([
    ["a", { text: "{}", json: { city: "Paris", nested: { n: 2 } } }],
    ["b", { text: "plain" }],
  ]);
  const inputs = { city: "Oslo", deep: { x: 1 } };

  it("resolves inputs, step outputs, fields of JSON outputs and leaves literals alone", () => {
    expect(resolveAgentBinding("{{inputs.city}}", inputs, outputs)).toBe("Oslo");
    expect(resolveAgentBinding("{{ inputs.deep.x }}", inputs, outputs)).toBe(1);
    expect(resolveAgentBinding("{{inputs}}", inputs, outputs)).toEqual(inputs);
    expect(resolveAgentBinding("{{steps.a.output}}", inputs, outputs)).toEqual({ city: "Paris", nested: { n: 2 } });
    expect(resolveAgentBinding("{{steps.a.output.nested.n}}", inputs, outputs)).toBe(2);
    expect(resolveAgentBinding("{{steps.b.output}}", inputs, outputs)).toBe("plain");
    expect(resolveAgentBinding("literal {{inputs.city}}", inputs, outputs)).toBe("literal {{inputs.city}}");
    expect(resolveAgentBinding(42, inputs, outputs)).toBe(42);
    expect(resolveAgentBinding({ a: "{{inputs.city}}" }, inputs, outputs)).toEqual({ a: "{{inputs.city}}" });
  });

  it("leaves out names whose binding names nothing, and keeps __proto__ as data", () => {
    const bound = bindStepInput(
      { missing: "{{inputs.nope}}", later: "{{steps.z.output}}", __proto__: "{{inputs.city}}", n: 3 },
      inputs,
      outputs,
    );
    expect(Object.keys(bound)).toEqual(["n"]);
    const proto = bindStepInput(JSON.parse('{"__proto__": "{{inputs.city}}"}'), inputs, outputs);
    expect(Object.hasOwn(proto, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
  });

  it("makes the run output from the output binding, keeping a whole step output as it is", () => {
    expect(workflowOutputOf("{{steps.b.output}}", inputs, outputs)).toEqual({ text: "plain" });
    expect(workflowOutputOf("{{steps.a.output.city}}", inputs, outputs)).toEqual({ text: "Paris" });
    expect(workflowOutputOf("{{steps.a.output.nested}}", inputs, outputs)).toEqual({ text: '{"n":2}', json: { n: 2 } });
    expect(workflowOutputOf("{{steps.z.output}}", inputs, outputs)).toBeNull();
  });
});

describe("parseWorkflow", () => {
  it("reads a workflow and refuses one that cannot run", () => {
    const w = parseWorkflow(
      JSON.stringify({ inputSchema: { type: "object" }, entry: "a", steps: [step("a")], output: "x", maxSteps: 3 }),
    );
    expect(w).toMatchObject({ entry: "a", maxSteps: 3, steps: [{ id: "a", type: "prompt" }] });
    expect(() => parseWorkflow("{}")).toThrow(/entry/);
    expect(() => parseWorkflow(JSON.stringify({ entry: "a", steps: [{ id: "a", type: "weird" }] }))).toThrow(
      /steps\[0\]/,
    );
    expect(() =>
      parseWorkflow(JSON.stringify({ entry: "a", steps: [{ id: "a", type: "tool", next: [{ when: true }] }] })),
    ).toThrow(/next/);
  });
});

describe("executeWorkflow", () => {
  const branching: Workflow = {
    inputSchema: { type: "object" },
    entry: "classify",
    steps: [
      step("classify", {
        input: { text: "{{inputs.text}}", tone: "formal" },
        next: [
          { when: { "==": [{ var: "steps.classify.output.label" }, "urgent"] }, to: "escalate" },
          { when: { ">": [{ var: "inputs.priority" }, 5] }, to: "escalate" },
          { when: true, to: "reply" },
        ],
      }),
      step("escalate", { input: { label: "{{steps.classify.output.label}}" } }),
      step("reply", { input: { label: "{{steps.classify.output.label}}", missing: "{{steps.escalate.output}}" } }),
    ],
    output: "{{steps.reply.output}}",
  };
  const answers = (label: string) =>
    scripted({
      classify: () => ok({ text: "", json: { label } }),
      escalate: (input) => ok({ text: `escalated ${String(input.label)}` }),
      reply: (input) => ok({ text: `replied ${String(input.label)}` }),
    });

  it("binds inputs and earlier outputs and follows the first matching JSON Logic branch", async () => {
    const s = answers("normal");
    const result = await executeWorkflow(branching, { text: "hello", priority: 1 }, s.run);
    expect(s.calls).toEqual([
      { stepId: "classify", input: { text: "hello", tone: "formal" } },
      { stepId: "reply", input: { label: "normal" } },
    ]);
    expect(result.error).toBeNull();
    expect(result.output).toEqual({ text: "replied normal" });
    expect(result.steps.map((r) => [r.stepId, r.status, r.reused])).toEqual([
      ["classify", "succeeded", false],
      ["reply", "succeeded", false],
    ]);
  });

  it("takes a branch on a step output and on an input", async () => {
    const urgent = answers("urgent");
    const byOutput = await executeWorkflow(branching, { text: "x", priority: 1 }, urgent.run);
    expect(urgent.calls.map((c) => c.stepId)).toEqual(["classify", "escalate"]);
    // The output binding names a step this path did not run: the run fails with no_output.
    expect(byOutput.output).toBeNull();
    expect(byOutput.error?.code).toBe("no_output");

    const byInput = answers("normal");
    await executeWorkflow(branching, { text: "x", priority: 9 }, byInput.run);
    expect(byInput.calls.map((c) => c.stepId)).toEqual(["classify", "escalate"]);
  });

  it("ends the run when no condition matches", async () => {
    const w: Workflow = {
      ...branching,
      steps: [step("only", { next: [{ when: false, to: "nowhere" }] })],
      entry: "only",
      output: "{{steps.only.output}}",
    };
    const s = scripted({ only: () => ok({ text: "done" }) });
    const result = await executeWorkflow(w, {}, s.run);
    expect(result).toMatchObject({ output: { text: "done" }, error: null });
  });

  it("bounds a loop by maxSteps and fails the run with max_steps", async () => {
    const loop: Workflow = {
      inputSchema: {},
      entry: "again",
      steps: [step("again", { next: "again" })],
      output: "{{steps.again.output}}",
      maxSteps: 4,
    };
    const s = scripted({ again: () => ok({ text: "once more" }) });
    const result = await executeWorkflow(loop, {}, s.run);
    expect(s.calls).toHaveLength(4);
    expect(result.steps).toHaveLength(4);
    expect(result.output).toBeNull();
    expect(result.error).toEqual({ code: "max_steps", message: expect.stringContaining("4") });
  });

  it("runs a tool step and binds its JSON result", async () => {
    const w: Workflow = {
      inputSchema: {},
      entry: "weather",
      steps: [
        step("weather", { type: "tool", input: { city: "{{inputs.city}}" }, next: "summary" }),
        step("summary", { input: { temp: "{{steps.weather.output.temperatureC}}" } }),
      ],
      output: "{{steps.summary.output}}",
    };
    const s = scripted({
      weather: () => ok({ text: '{"temperatureC":21}', json: { temperatureC: 21 } }, { provider: null, model: null }),
      summary: (input) => ok({ text: `${String(input.temp)} degrees` }),
    });
    const result = await executeWorkflow(w, { city: "Paris" }, s.run);
    expect(s.calls[0]).toEqual({ stepId: "weather", input: { city: "Paris" } });
    expect(s.calls[1]).toEqual({ stepId: "summary", input: { temp: 21 } });
    expect(result.output).toEqual({ text: "21 degrees" });
    expect(result.steps[0]?.type).toBe("tool");
  });

  it("stops at a failing step with its error", async () => {
    const s = scripted({
      classify: () => ({
        ...ok({ text: "" }),
        status: "failed",
        output: null,
        error: { code: "provider_error", message: "down" },
      }),
    });
    const result = await executeWorkflow(branching, { text: "x" }, s.run);
    expect(s.calls).toHaveLength(1);
    expect(result.error).toEqual({ code: "provider_error", message: "down" });
    expect(result.steps.map((r) => r.status)).toEqual(["failed"]);
  });

  it("fails the run when a condition is not valid JSON Logic", async () => {
    const w: Workflow = {
      inputSchema: {},
      entry: "a",
      steps: [step("a", { next: [{ when: { no_such_op: [1] }, to: "a" }] })],
      output: "{{steps.a.output}}",
    };
    const result = await executeWorkflow(w, {}, scripted({ a: () => ok({ text: "x" }) }).run);
    expect(result.error?.code).toBe("invalid_condition");
  });

  it("starts at a step with reused records visible to bindings and counted by maxSteps", async () => {
    const s = answers("normal");
    const reused = [
      {
        stepId: "classify",
        type: "prompt" as const,
        input: {},
        reused: true,
        ...ok({ text: "", json: { label: "kept" } }),
      },
    ];
    const result = await executeWorkflow(branching, { text: "x" }, s.run, { startAt: "reply", reused });
    expect(s.calls).toEqual([{ stepId: "reply", input: { label: "kept" } }]);
    expect(result.steps.map((r) => [r.stepId, r.reused])).toEqual([
      ["classify", true],
      ["reply", false],
    ]);
    const bounded = await executeWorkflow({ ...branching, maxSteps: 1 }, {}, s.run, { startAt: "reply", reused });
    expect(bounded.error?.code).toBe("max_steps");
  });
});
