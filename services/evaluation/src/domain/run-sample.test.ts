import { describe, expect, it } from "vitest";
import { type CompletedRun, inSample, isProductionRun, runMatches } from "./run-sample.js";

const run = (over: Partial<CompletedRun> = {}): CompletedRun => ({
  runId: "run_1",
  kind: "prompt",
  organizationId: "org_1",
  status: "succeeded",
  promptId: "prm_1",
  skillId: "",
  agentId: "",
  ...over,
});

describe("sampling production runs", () => {
  it("answers the same for the same rule and run, and takes about the rate", () => {
    const runs = Array.from({ length: 2_000 }, (_, i) => `run_${i}`);
    const taken = runs.filter((r) => inSample("anq_1", r, 0.25));
    expect(taken.length).toBeGreaterThan(400);
    expect(taken.length).toBeLessThan(600);
    expect(runs.filter((r) => inSample("anq_1", r, 0.25))).toEqual(taken);
    expect(runs.filter((r) => inSample("anq_2", r, 0.25))).not.toEqual(taken);
    expect(runs.every((r) => inSample("anq_1", r, 1))).toBe(true);
    expect(runs.some((r) => inSample("anq_1", r, 0))).toBe(false);
  });

  it("matches a run by kind and id, and by label only when the target names one", () => {
    expect(runMatches({ kind: "prompt", id: "prm_1", label: "" }, run())).toBe(true);
    expect(runMatches({ kind: "prompt", id: "prm_2", label: "" }, run())).toBe(false);
    // A skill run's event names no prompt; a prompt target never takes it.
    expect(runMatches({ kind: "skill", id: "prm_1", label: "" }, run())).toBe(false);
    expect(runMatches({ kind: "prompt", id: "prm_1", label: "production" }, run())).toBe(false);
    expect(runMatches({ kind: "prompt", id: "prm_1", label: "production" }, run({ label: "production" }))).toBe(true);
    expect(runMatches({ kind: "skill", id: "skl_1", label: "" }, run({ kind: "skill", skillId: "skl_1" }))).toBe(true);
  });

  it("leaves out judge calls and the runs an evaluation made", () => {
    expect(isProductionRun(run())).toBe(true);
    expect(isProductionRun(run({ kind: "judge" }))).toBe(false);
    expect(isProductionRun(run({ kind: "skill", evaluationRunId: "evr_1" }))).toBe(false);
  });
});
