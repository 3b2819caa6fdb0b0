import { describe, expect, it } from "vitest";
import { breakingChangesOf } from "./breaking-changes.js";
import { buildReport, type ReportTarget } from "./build-report.js";
import { compareReports } from "./comparison.js";
import {
  type AttemptResult,
  changeOf,
  combineAttempts,
  contractCheckOf,
  outcomeOf,
  summarizeTarget,
  type TargetResult,
} from "./report.js";

const attempt = (
  outcome: AttemptResult["outcome"],
  text: string | null,
  extra: Partial<AttemptResult> = {},
): AttemptResult => ({
  outcome,
  runId: outcome === "error" && text === null ? null : "srun_1",
  output: text === null ? null : { text },
  assertions: [],
  contractValid: text === null ? null : true,
  latencyMs: 100,
  estimatedCostUsd: 0.01,
  usage: outcome === "error" && text === null ? null : { inputTokens: 10, outputTokens: 5 },
  judgeRuns: [],
  ...extra,
});

/** One case on one target with a single attempt. */
const result = (outcome: AttemptResult["outcome"], text: string | null, extra: Partial<AttemptResult> = {}) =>
  combineAttempts([attempt(outcome, text, extra)]);

/** One case on one target with one attempt per outcome given. */
const attempts = (...outcomes: AttemptResult["outcome"][]): TargetResult =>
  combineAttempts(outcomes.map((o, i) => attempt(o, `out ${i}`, { runId: `srun_${i}` })));

describe("outcomeOf", () => {
  it("is error when the case did not run, pass when every assertion passed, else fail", () => {
    expect(outcomeOf(false, [])).toBe("error");
    expect(outcomeOf(true, [])).toBe("pass");
    expect(outcomeOf(true, [{ type: "contains", passed: true, message: "" }])).toBe("pass");
    expect(
      outcomeOf(true, [
        { type: "contains", passed: true, message: "" },
        { type: "regex", passed: false, message: "" },
      ]),
    ).toBe("fail");
  });
});

describe("changeOf (published before, draft after)", () => {
  it.each([
    ["fail", "pass", "fixed"],
    ["error", "pass", "fixed"],
    ["pass", "fail", "regressed"],
    ["pass", "error", "regressed"],
  ] as const)("%s → %s is %s", (before, after, change) => {
    expect(changeOf(result(before, "a"), result(after, "b"))).toBe(change);
  });

  it("tells an output change from an unchanged case when the outcome stays", () => {
    expect(changeOf(result("pass", "a"), result("pass", "a"))).toBe("unchanged");
    expect(changeOf(result("pass", "a"), result("pass", "b"))).toBe("output_changed");
    expect(changeOf(result("fail", "a"), result("fail", "b"))).toBe("output_changed");
  });
});

describe("summarizeTarget", () => {
  it("counts outcomes and averages latency over the cases that ran", () => {
    const s = summarizeTarget([
      result("pass", "a", { latencyMs: 100, estimatedCostUsd: 0.5 }),
      result("fail", "b", { latencyMs: 300, estimatedCostUsd: 0.25 }),
      result("error", null, { latencyMs: 0, estimatedCostUsd: null }),
      result("pass", "c", { latencyMs: 200, estimatedCostUsd: 0.25 }),
    ]);
    expect(s).toMatchObject({
      passed: 2,
      failed: 1,
      errored: 1,
      flaky: 0,
      passRate: 0.5,
      attempts: 4,
      avgLatencyMs: 200,
      latencyMs: { p50: 200, p95: 300, p99: 300 },
      usage: { inputTokens: 30, outputTokens: 15 },
      totalCostUsd: 1,
      pricedCostUsd: 1,
      unpricedRuns: 0,
    });
  });

  it("gives a null total cost when a run's cost is unknown, never 0, and counts the unpriced runs", () => {
    const s = summarizeTarget([result("pass", "a", { estimatedCostUsd: null }), result("pass", "b")]);
    expect(s).toMatchObject({ totalCostUsd: null, pricedCostUsd: 0.01, unpricedRuns: 1 });
    expect(summarizeTarget([])).toMatchObject({ passRate: 0, avgLatencyMs: 0, totalCostUsd: 0, attempts: 0 });
  });

  it("adds the judges' tokens and cost to the totals, and shows them apart", () => {
    const judged = result("pass", "a", {
      judgeRuns: [
        { runId: "jrun_1", usage: { inputTokens: 100, outputTokens: 20 }, estimatedCostUsd: 0.002 },
        { runId: "jrun_2", usage: { inputTokens: 50, outputTokens: 10 }, estimatedCostUsd: null },
      ],
    });
    expect(summarizeTarget([judged])).toMatchObject({
      usage: { inputTokens: 160, outputTokens: 35 },
      totalCostUsd: null,
      pricedCostUsd: 0.012,
      unpricedRuns: 1,
      judge: { runs: 2, usage: { inputTokens: 150, outputTokens: 30 }, estimatedCostUsd: null },
    });
    expect(judged.attempts[0]?.judgeRuns.map((j) => j.runId)).toEqual(["jrun_1", "jrun_2"]);
  });

  it("sums cached, cache-write and reasoning tokens class by class, absent while no run reported them", () => {
    const cached = result("pass", "a", {
      usage: { inputTokens: 2006, outputTokens: 300, cachedInputTokens: 1920, reasoningTokens: 192 },
      judgeRuns: [
        {
          runId: "jrun_1",
          usage: { inputTokens: 100, outputTokens: 20, cacheWriteInputTokens: 80 },
          estimatedCostUsd: 0.001,
        },
      ],
    });
    const plain = result("pass", "b");
    expect(summarizeTarget([cached, plain])).toMatchObject({
      usage: {
        inputTokens: 2116,
        outputTokens: 325,
        cachedInputTokens: 1920,
        cacheWriteInputTokens: 80,
        reasoningTokens: 192,
      },
      judge: { usage: { inputTokens: 100, outputTokens: 20, cacheWriteInputTokens: 80 } },
    });
    expect(summarizeTarget([plain]).usage).toEqual({ inputTokens: 10, outputTokens: 5 });
  });

  it("takes latency percentiles over every attempt that ran", () => {
    const many = combineAttempts(
      Array.from({ length: 100 }, (_, i) => attempt("pass", "a", { latencyMs: i + 1, runId: `srun_${i}` })),
    );
    expect(summarizeTarget([many]).latencyMs).toEqual({ p50: 50, p95: 95, p99: 99 });
  });
});

describe("repeats", () => {
  it("gives each case a pass rate and a verdict over its attempts", () => {
    expect(attempts("pass", "pass", "pass")).toMatchObject({ outcome: "pass", passRate: 1, verdict: "passed" });
    expect(attempts("fail", "error", "fail")).toMatchObject({ outcome: "fail", passRate: 0, verdict: "failed" });
    expect(attempts("error", "error")).toMatchObject({ outcome: "error", passRate: 0, verdict: "failed" });
    const flaky = attempts("pass", "fail", "pass", "pass");
    expect(flaky).toMatchObject({ outcome: "fail", passRate: 0.75, verdict: "flaky", runId: "srun_0" });
    expect(flaky.attempts.map((a) => [a.attempt, a.outcome, a.runId])).toEqual([
      [1, "pass", "srun_0"],
      [2, "fail", "srun_1"],
      [3, "pass", "srun_2"],
      [4, "pass", "srun_3"],
    ]);
  });

  it("calls a case regressed or fixed when its pass rate moves by at least the threshold", () => {
    // 5/5 → 4/5 is a drop of 0.2: flaky, not regressed; 5/5 → 3/5 (0.4) is regressed.
    expect(
      changeOf(attempts("pass", "pass", "pass", "pass", "pass"), attempts("pass", "pass", "pass", "pass", "fail")),
    ).toBe("unchanged");
    expect(
      changeOf(attempts("pass", "pass", "pass", "pass", "pass"), attempts("pass", "fail", "pass", "fail", "pass")),
    ).toBe("regressed");
    expect(changeOf(attempts("fail", "fail", "pass", "fail"), attempts("pass", "pass", "pass", "fail"))).toBe("fixed");
  });

  it("counts fixed, regressed, still failing and flaky, and says so in one line", () => {
    const targets: ReportTarget[] = [
      { label: "draft", skillVersionId: "sv_d", inputSchema: {}, outputSchema: {} },
      { label: "published", skillVersionId: "sv_p", inputSchema: {}, outputSchema: {} },
    ];
    const report = buildReport(
      targets,
      [
        { caseId: "evc_1", byTarget: { published: attempts("fail", "fail"), draft: attempts("pass", "pass") } },
        { caseId: "evc_2", byTarget: { published: attempts("pass", "pass"), draft: attempts("fail", "fail") } },
        { caseId: "evc_3", byTarget: { published: attempts("fail", "fail"), draft: attempts("fail", "error") } },
        { caseId: "evc_4", byTarget: { published: attempts("pass", "fail"), draft: attempts("fail", "pass") } },
      ],
      new Map(),
      { repeats: 2 },
    );
    expect(report.summary.repeats).toBe(2);
    expect(report.summary.changes).toEqual({
      fixed: 1,
      regressed: 1,
      outputChanged: 0,
      unchanged: 2,
      stillFailing: 1,
      flaky: 1,
    });
    expect(report.summary.byTarget.draft).toMatchObject({
      passed: 1,
      failed: 3,
      flaky: 1,
      passRate: 0.375,
      attempts: 8,
    });
    expect(report.summary.text).toBe(
      "4 cases × 2 attempts: draft 1/4 passed (1 flaky), published 1/4 passed (1 flaky); 1 fixed, 1 regressed, 0 output changed, 2 unchanged (1 still failing, 1 flaky among them).",
    );
    expect(buildReport(targets, [], new Map(), { cancelled: true }).summary.text).toMatch(/^Cancelled: 0 cases/);
  });
});

describe("compareReports", () => {
  it("compares two runs case by case on one target, with the same counts and sentence", () => {
    const run = (id: string, repeats: number) => ({
      _id: id,
      repeats,
      targets: [{ label: "draft" as const, skillVersionId: `sv_${id}` }],
    });
    const comparison = compareReports(
      {
        run: run("evr_base", 2),
        label: "draft",
        results: [
          { caseId: "evc_1", byTarget: { draft: attempts("pass", "pass") }, change: null },
          { caseId: "evc_2", byTarget: { draft: attempts("fail", "fail") }, change: null },
          { caseId: "evc_3", byTarget: { draft: attempts("pass", "pass") }, change: null },
        ],
      },
      {
        run: run("evr_head", 2),
        label: "draft",
        results: [
          { caseId: "evc_1", byTarget: { draft: attempts("fail", "fail") }, change: null },
          { caseId: "evc_2", byTarget: { draft: attempts("pass", "pass") }, change: null },
          { caseId: "evc_4", byTarget: { draft: attempts("pass", "fail") }, change: null },
        ],
      },
    );
    expect(comparison.base).toEqual({
      evaluationRunId: "evr_base",
      target: "draft",
      skillVersionId: "sv_evr_base",
      promptVersionId: "",
      repeats: 2,
    });
    expect(
      comparison.results.map((r) => [r.caseId, r.base?.verdict ?? null, r.head?.verdict ?? null, r.change]),
    ).toEqual([
      ["evc_1", "passed", "failed", "regressed"],
      ["evc_2", "failed", "passed", "fixed"],
      ["evc_4", null, "flaky", null],
      ["evc_3", "passed", null, null],
    ]);
    expect(comparison.results[0]?.head).toMatchObject({ passRate: 0, attempts: 2, runId: "srun_0" });
    expect(comparison.summary.text).toBe(
      "2 cases compared on draft: 1 fixed, 1 regressed, 0 output changed, 0 unchanged; 2 in one run only.",
    );
  });
});

describe("contractCheckOf", () => {
  it("validates JSON outputs as JSON and text outputs as a string", () => {
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    expect(contractCheckOf(schema, { text: "", json: { city: "Oslo" } }).contractValid).toBe(true);
    const bad = contractCheckOf(schema, { text: "", json: { town: "Oslo" } });
    expect(bad.contractValid).toBe(false);
    expect(bad.message).toMatch(/misses city/);
    expect(contractCheckOf({ type: "string" }, { text: "hi" }).contractValid).toBe(true);
    expect(contractCheckOf(schema, { text: "hi" }).contractValid).toBe(false);
    expect(contractCheckOf(schema, null).contractValid).toBeNull();
  });
});

describe("breakingChangesOf", () => {
  const input = {
    type: "object",
    properties: {
      city: { type: "string" },
      days: { type: "integer" },
      address: { type: "object", properties: { zip: { type: "string" } } },
    },
    required: ["city"],
  };
  const output = {
    type: "object",
    properties: {
      summary: { type: "string" },
      temp: { type: "number" },
      tags: { type: "array", items: { type: "object", properties: { k: { type: "string" } } } },
    },
  };

  it("finds nothing between identical versions, and nothing for looser inputs or tighter outputs", () => {
    expect(
      breakingChangesOf({ inputSchema: input, outputSchema: output }, { inputSchema: input, outputSchema: output }),
    ).toEqual([]);
    const looser = { ...input, required: [], properties: { ...input.properties, days: { type: "number" } } };
    const tighter = {
      ...output,
      properties: { ...output.properties, temp: { type: "integer" }, extra: { type: "string" } },
    };
    expect(
      breakingChangesOf({ inputSchema: input, outputSchema: output }, { inputSchema: looser, outputSchema: tighter }),
    ).toEqual([]);
  });

  it("reports required inputs added, input types narrowed, output fields removed and output types changed", () => {
    const draftInput = {
      ...input,
      properties: {
        ...input.properties,
        days: { type: "string" },
        address: { type: "object", properties: { zip: { type: "string" } }, required: ["zip"] },
      },
      required: ["city", "country"],
    };
    const draftOutput = {
      type: "object",
      properties: { temp: { type: "string" }, tags: { type: "array", items: { type: "object", properties: {} } } },
    };
    const changes = breakingChangesOf(
      { inputSchema: input, outputSchema: output },
      { inputSchema: draftInput, outputSchema: draftOutput },
    );
    expect(changes.map(({ kind, path }) => ({ kind, path }))).toEqual([
      { kind: "input_required_added", path: "/country" },
      { kind: "input_type_changed", path: "/days" },
      { kind: "input_required_added", path: "/address/zip" },
      { kind: "output_field_removed", path: "/summary" },
      { kind: "output_type_changed", path: "/temp" },
      { kind: "output_field_removed", path: "/tags/*/k" },
    ]);
  });

  it("reports a text output that became JSON as a type change of the root", () => {
    const changes = breakingChangesOf(
      { inputSchema: { type: "object" }, outputSchema: { type: "string" } },
      { inputSchema: { type: "object" }, outputSchema: output },
    );
    expect(changes).toEqual([
      { kind: "output_type_changed", path: "", message: expect.stringMatching(/the output was string/) },
    ]);
  });
});

describe("buildReport", () => {
  const targets: ReportTarget[] = [
    { label: "draft", skillVersionId: "sv_d", inputSchema: { type: "object" }, outputSchema: { type: "string" } },
    { label: "published", skillVersionId: "sv_p", inputSchema: { type: "object" }, outputSchema: { type: "string" } },
  ];

  it("classifies each case, counts the changes and lists contract violations", () => {
    const report = buildReport(
      targets,
      [
        { caseId: "evc_1", byTarget: { published: result("fail", "a"), draft: result("pass", "b") } },
        { caseId: "evc_2", byTarget: { published: result("pass", "a"), draft: result("pass", "a") } },
        {
          caseId: "evc_3",
          byTarget: { published: result("pass", "a"), draft: result("error", null) },
        },
        {
          caseId: "evc_4",
          byTarget: { published: result("pass", "a"), draft: result("pass", "z", { contractValid: false }) },
        },
      ],
      new Map([["evc_4:draft", "the output does not conform"]]),
    );
    expect(report.results.map((r) => r.change)).toEqual(["fixed", "unchanged", "regressed", "output_changed"]);
    expect(report.summary.changes).toEqual({
      fixed: 1,
      regressed: 1,
      outputChanged: 1,
      unchanged: 1,
      stillFailing: 0,
      flaky: 0,
    });
    expect(report.summary.byTarget.draft).toMatchObject({ passed: 3, failed: 0, errored: 1, passRate: 0.75 });
    expect(report.summary.text).toBe(
      "4 cases: draft 3/4 passed (1 errored), published 3/4 passed; 1 fixed, 1 regressed, 1 output changed, 1 unchanged.",
    );
    expect(report.contractValidity).toEqual({
      valid: false,
      violations: [{ caseId: "evc_4", target: "draft", kind: "output_schema", message: "the output does not conform" }],
      breakingChanges: [],
    });
  });

  it("has null changes and no breaking changes with one target", () => {
    const draftOnly = [{ ...targets[0], outputSchema: { type: "object" } } as ReportTarget];
    const report = buildReport(draftOnly, [{ caseId: "evc_1", byTarget: { draft: result("pass", "a") } }], new Map());
    expect(report.results[0]?.change).toBeNull();
    expect(report.summary.changes).toEqual({
      fixed: 0,
      regressed: 0,
      outputChanged: 0,
      unchanged: 0,
      stillFailing: 0,
      flaky: 0,
    });
    expect(report.contractValidity).toEqual({ valid: true, violations: [], breakingChanges: [] });
    expect(report.summary.text).toBe("1 case: draft 1/1 passed.");
  });
});
