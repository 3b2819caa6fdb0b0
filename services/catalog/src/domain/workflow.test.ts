import { describe, expect, it } from "vitest";
import { checkWorkflow, parseWorkflow, parseWorkflowBinding, pinWorkflow } from "./workflow.js";

const INPUT_SCHEMA = { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } } };

/** A valid workflow: classify, then branch to one of two steps, then a bounded retry loop. */
function branchingLoop() {
  return {
    inputSchema: INPUT_SCHEMA,
    entry: "classify",
    maxSteps: 10,
    steps: [
      {
        id: "classify",
        type: "prompt",
        ref: { promptId: "prm_1" },
        input: { city: "{{inputs.city}}" },
        next: [
          { when: { "==": [{ var: "steps.classify.output.kind" }, "rain"] }, to: "umbrella" },
          { when: true, to: "forecast" },
        ],
      },
      { id: "umbrella", type: "tool", ref: { toolId: "tool_1" }, input: { city: "{{inputs.city}}" }, next: "forecast" },
      {
        id: "forecast",
        type: "skill",
        ref: { skillId: "skl_1", skillVersionId: "sv_1" },
        input: { topic: "{{steps.classify.output.kind}}", days: 3 },
        next: [{ when: { "<": [{ var: "steps.forecast.output.confidence" }, 0.5] }, to: "forecast" }],
      },
    ],
    output: "{{steps.forecast.output}}",
  };
}

const codesAt = (r: { errors: { path: string; code: string }[] }) => r.errors.map((e) => `${e.path} ${e.code}`);

describe("checkWorkflow", () => {
  it("accepts a workflow with a branch and a loop bounded by maxSteps", () => {
    const r = checkWorkflow(branchingLoop());
    expect(r.errors).toEqual([]);
    // umbrella runs on one branch only: reading it later would be a warning, but nothing does.
    expect(r.warnings).toEqual([]);
    expect(r.workflow.steps.map((s) => s.id)).toEqual(["classify", "umbrella", "forecast"]);
  });

  it("reports a malformed shape with the path of each problem", () => {
    const r = checkWorkflow({
      inputSchema: "x",
      entry: 3,
      extra: true,
      maxSteps: 0,
      steps: [
        "nope",
        { id: "1bad", type: "agent", ref: {}, input: [] },
        { id: "ok", type: "prompt", ref: { promptId: "p", skillId: "s", promptVersionId: 4 }, next: 5 },
        { id: "c", type: "tool", ref: { toolId: "t" }, next: [{ when: true }, { to: "ok", if: 1 }] },
      ],
    });
    expect(codesAt(r)).toEqual(
      expect.arrayContaining([
        "entry malformed",
        "extra malformed",
        "inputSchema malformed",
        "maxSteps malformed",
        "output required",
        "steps[0] malformed",
        "steps[1].id malformed",
        "steps[1].type malformed",
        "steps[1].input malformed",
        "steps[2].ref.skillId malformed",
        "steps[2].ref.promptVersionId malformed",
        "steps[2].next malformed",
        "steps[3].next[0].to required",
        "steps[3].next[1].when required",
        "steps[3].next[1].if malformed",
      ]),
    );
    expect(checkWorkflow([]).errors).toEqual([{ path: "", code: "malformed", message: expect.any(String) }]);
    expect(codesAt(checkWorkflow({}))).toEqual([
      "entry required",
      "inputSchema required",
      "output required",
      "steps required",
    ]);
    expect(parseWorkflow(branchingLoop()).issues).toEqual([]);
  });

  it("reports duplicate ids, an unknown entry and transitions to missing steps", () => {
    const w = branchingLoop();
    w.entry = "start";
    w.steps[1] = { ...w.steps[1], id: "classify", next: "nowhere" } as (typeof w.steps)[number];
    (w.steps[0] as { next: unknown }).next = [{ when: true, to: "ghost" }];
    const r = checkWorkflow(w);
    expect(codesAt(r)).toEqual(
      expect.arrayContaining([
        "entry unknown_step",
        "steps[0].next[0].to unknown_step",
        "steps[1].id duplicate_step_id",
      ]),
    );
  });

  it("warns about unreachable steps", () => {
    const w = branchingLoop();
    w.steps.push({ id: "orphan", type: "tool", ref: { toolId: "tool_2" }, input: {} } as (typeof w.steps)[number]);
    const r = checkWorkflow(w);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([{ path: "steps[3]", code: "unreachable_step", message: expect.any(String) }]);
  });

  it("refuses a cycle without maxSteps at the transition that closes it", () => {
    const w: Record<string, unknown> = branchingLoop();
    delete w.maxSteps;
    expect(codesAt(checkWorkflow(w))).toEqual(["steps[2].next[0].to unbounded_cycle"]);
    const straight = branchingLoop() as Record<string, unknown>;
    (straight.steps as { next?: unknown }[])[2] = { ...(straight.steps as object[])[2], next: undefined };
    delete straight.maxSteps;
    expect(checkWorkflow(JSON.parse(JSON.stringify(straight))).errors).toEqual([]);
    expect(codesAt(checkWorkflow({ ...branchingLoop(), maxSteps: 1001 }))).toEqual(["maxSteps malformed"]);
  });

  it("refuses bindings to unknown inputs, to steps that cannot have run, and unknown forms", () => {
    const w = branchingLoop();
    (w.steps[0] as { input: unknown }).input = {
      city: "{{inputs.town}}",
      later: "{{steps.forecast.output}}",
      ghost: "{{steps.ghost.output}}",
      typo: "{{input.city}}",
      literal: { nested: "{{not checked}}" },
    };
    (w.steps[2] as { input: Record<string, unknown> }).input.maybe = "{{steps.umbrella.output.kind}}";
    const r = checkWorkflow(w);
    expect(codesAt(r)).toEqual([
      "steps[0].input.city unknown_input",
      "steps[0].input.ghost unknown_step",
      "steps[0].input.later step_not_before",
      "steps[0].input.typo invalid_binding",
    ]);
    // umbrella runs on one branch only: a warning, not an error.
    expect(r.warnings).toEqual([
      { path: "steps[2].input.maybe", code: "step_may_not_have_run", message: expect.any(String) },
    ]);
  });

  it("checks the output binding", () => {
    expect(codesAt(checkWorkflow({ ...branchingLoop(), output: "forecast" }))).toEqual(["output invalid_binding"]);
    expect(codesAt(checkWorkflow({ ...branchingLoop(), output: "{{steps.nope.output}}" }))).toEqual([
      "output unknown_step",
    ]);
    expect(checkWorkflow({ ...branchingLoop(), output: "{{steps.umbrella.output}}" }).warnings).toEqual([
      { path: "output", code: "step_may_not_have_run", message: expect.any(String) },
    ]);
  });

  it("refuses invalid JSON Logic and variables outside {inputs, steps}", () => {
    const w = branchingLoop();
    (w.steps[0] as { next: unknown }).next = [
      { when: { method: ["abc", "toUpperCase"] }, to: "umbrella" },
      { when: { "==": [1, 1], "!=": [1, 2] }, to: "umbrella" },
      { when: { "==": [{ var: "city" }, "x"] }, to: "forecast" },
      { when: { "==": [{ var: "inputs.town" }, "x"] }, to: "forecast" },
      { when: { some: [{ var: "inputs.city" }, { "==": [{ var: "" }, "x"] }] }, to: "forecast" },
    ];
    expect(codesAt(checkWorkflow(w))).toEqual([
      "steps[0].next[0].when invalid_condition",
      "steps[0].next[1].when invalid_condition",
      "steps[0].next[2].when invalid_condition",
      "steps[0].next[3].when unknown_input",
    ]);
  });

  it("refuses an input schema that is not a JSON Schema of type object", () => {
    expect(codesAt(checkWorkflow({ ...branchingLoop(), inputSchema: { type: "array" } }))).toEqual([
      "inputSchema.type invalid_input_schema",
    ]);
    expect(codesAt(checkWorkflow({ ...branchingLoop(), inputSchema: { type: "object", minProperties: -1 } }))).toEqual([
      "inputSchema.minProperties invalid_input_schema",
    ]);
  });
});

describe("parseWorkflowBinding", () => {
  it("reads inputs, step outputs and literals", () => {
    expect(parseWorkflowBinding("{{inputs.city}}")).toEqual({ kind: "input", field: "city", path: [] });
    expect(parseWorkflowBinding("{{ steps.a.output.x.y }}")).toEqual({ kind: "step", stepId: "a", path: ["x", "y"] });
    expect(parseWorkflowBinding(3)).toEqual({ kind: "literal", value: 3 });
    expect(parseWorkflowBinding("{{steps.a}}")).toEqual({ kind: "invalid" });
  });
});

describe("pinWorkflow", () => {
  it("adds the version key right after the id key and changes nothing else", () => {
    const w = JSON.parse(JSON.stringify(branchingLoop()));
    const pinned = pinWorkflow(
      w,
      new Map([
        [0, "pv_9"],
        [1, "tv_9"],
      ]),
    );
    expect(JSON.stringify(pinned.steps)).toContain('"ref":{"promptId":"prm_1","promptVersionId":"pv_9"}');
    expect(JSON.stringify(pinned.steps)).toContain('"ref":{"toolId":"tool_1","toolVersionId":"tv_9"}');
    expect(Object.keys(pinned)).toEqual(Object.keys(w));
    expect(w.steps[0].ref).toEqual({ promptId: "prm_1" });
  });
});
