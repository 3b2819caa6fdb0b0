/**
 * The agent builder's workflow edits (console/src/workflow-model.ts): steps added, moved, renamed
 * and removed keep a list-order workflow chained, mappings read and write the binding forms the
 * catalog takes, and issue paths find their step and field. What the builder makes is checked by
 * the catalog's own rules (services/catalog/src/domain/workflow.ts), not by a copy of them.
 */
import type { Workflow } from "@kiln/sdk";
import { describe, expect, it } from "vitest";
import {
  addStep,
  bindingOf,
  builderWorkflow,
  isChain,
  mappingOf,
  moveStep,
  placeOf,
  removeStep,
  renameStep,
  setMapping,
  setNext,
  stepIdFor,
} from "../console/src/workflow-model.js";
import { checkWorkflow } from "../services/catalog/src/domain/workflow.js";

/** A two-step agent as the console test builds it: a prompt, then a tool fed by its output. */
function twoSteps(): Workflow {
  let w = builderWorkflow({});
  w = { ...w, inputSchema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] } };
  w = addStep(w, "prompt", "prm_1", "Summarizer");
  w = addStep(w, "tool", "tool_1", "Filing");
  w = setMapping(w, 0, "topic", { source: "input", field: "topic" });
  return setMapping(w, 1, "summary", { source: "step", stepId: "summarizer", path: "" });
}

const codes = (w: Workflow) => {
  const { errors, warnings } = checkWorkflow(w);
  return [...errors, ...warnings].map((i) => `${i.path} ${i.code}`);
};

describe("the agent builder's workflow model", () => {
  it("starts a new agent's {} as an empty workflow and chains the steps it adds, the last one's output answered", () => {
    expect(builderWorkflow({})).toEqual({
      inputSchema: { type: "object", properties: {}, required: [] },
      entry: "",
      steps: [],
      output: "",
    });
    const w = twoSteps();
    expect(w).toMatchObject({
      entry: "summarizer",
      output: "{{steps.filing.output}}",
      steps: [
        {
          id: "summarizer",
          type: "prompt",
          ref: { promptId: "prm_1" },
          input: { topic: "{{inputs.topic}}" },
          next: "filing",
        },
        { id: "filing", type: "tool", ref: { toolId: "tool_1" }, input: { summary: "{{steps.summarizer.output}}" } },
      ],
    });
    expect(w.steps[1]).not.toHaveProperty("next");
    expect(isChain(w)).toBe(true);
    expect(codes(w)).toEqual([]);
  });

  it("moves a step and keeps the chain; reading a step that now runs later is the catalog's step_not_before", () => {
    const moved = moveStep(twoSteps(), 1, -1);
    expect(moved.steps.map((s) => [s.id, s.next])).toEqual([
      ["filing", "summarizer"],
      ["summarizer", undefined],
    ]);
    expect(moved.entry).toBe("filing");
    expect(codes(moved)).toContain("steps[0].input.summary step_not_before");
    expect(placeOf("steps[0].input.summary")).toEqual({ step: 0, field: "input", name: "summary" });
    expect(moveStep(moved, 0, 1)).toEqual(twoSteps());
    expect(moveStep(moved, 0, -1)).toBe(moved);
  });

  it("renames a step everywhere it is named, and removes one without leaving a dangling transition", () => {
    const renamed = renameStep(twoSteps(), 0, "sum");
    expect(renamed.entry).toBe("sum");
    expect(renamed.steps[0]?.next).toBe("filing");
    expect(renamed.steps[1]?.input?.summary).toBe("{{steps.sum.output}}");
    expect(codes(renamed)).toEqual([]);
    const removed = removeStep(twoSteps(), 1);
    expect(removed).toMatchObject({ entry: "summarizer", output: "", steps: [{ id: "summarizer" }] });
    expect(removed.steps[0]).not.toHaveProperty("next");
    // Not a chain (a loop back to the first step): removing keeps the other transitions as they are.
    const loop = setNext(twoSteps(), 1, "summarizer");
    expect(isChain(loop)).toBe(false);
    expect(codes(loop)).toContain("steps[1].next unbounded_cycle");
    expect(removeStep(loop, 0).steps).toEqual([
      { id: "filing", type: "tool", ref: { toolId: "tool_1" }, input: { summary: "{{steps.summarizer.output}}" } },
    ]);
  });

  it("reads and writes the binding forms; a typo in a binding stays text the catalog refuses", () => {
    for (const text of ["{{inputs.topic}}", "{{steps.a.output}}", "{{steps.a.output.items.0}}", "plain"]) {
      expect(bindingOf(mappingOf(text))).toBe(text);
    }
    expect(mappingOf("{{steps.a.output.x.y}}")).toEqual({ source: "step", stepId: "a", path: "x.y" });
    expect(mappingOf(42)).toEqual({ source: "literal", text: "42" });
    // A fixed value is written as the input's type reads it.
    const fixed = (text: string, type?: string) =>
      setMapping(twoSteps(), 1, "n", { source: "literal", text }, type).steps[1]?.input?.n;
    expect(fixed("42", "integer")).toBe(42);
    expect(fixed("42", "string")).toBe("42");
    expect(fixed("4x", "number")).toBe("4x");
    expect(fixed("4.", "number")).toBe("4.");
    expect(fixed("true", "boolean")).toBe(true);
    expect(fixed('{"a": [1]}', "object")).toEqual({ a: [1] });
    expect(fixed("42")).toBe("42");
    const typo = setMapping(twoSteps(), 1, "summary", { source: "literal", text: "{{step.summarizer.output}}" });
    expect(codes(typo)).toContain("steps[1].input.summary invalid_binding");
    expect(placeOf("workflow.steps[2].ref.promptId")).toEqual({ step: 2, field: "ref" });
    expect(placeOf("inputSchema.properties.x")).toEqual({ part: "inputSchema" });
    expect(placeOf("")).toEqual({ part: "workflow" });
  });

  it("makes step ids the catalog accepts from any name, never one already taken", () => {
    expect(stepIdFor("Weekly Digest (v2)!", [])).toBe("weekly_digest_v2");
    expect(stepIdFor("42 things", [])).toBe("things");
    expect(stepIdFor("ÉÉ", [])).toBe("step");
    expect(stepIdFor("Filing", ["filing", "filing_2"])).toBe("filing_3");
  });
});
