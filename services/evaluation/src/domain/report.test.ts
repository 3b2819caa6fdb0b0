import { describe, expect, it } from "vitest";
import { breakingChangesOf } from "./breaking-changes.js";
import {
  buildReport,
  changeOf,
  contractCheckOf,
  outcomeOf,
  type ReportTarget,
  summarizeTarget,
  type TargetResult,
} from "./report.js";

const result = (
  outcome: TargetResult["outcome"],
  text: string | null,
  extra: Partial<TargetResult> = {},
): TargetResult => ({
  outcome,
  runId: outcome === "error" && text === null ? null : "srun_1",
  output: text === null ? null : { text },
  assertions: [],
  contractValid: text === null ? null : true,
  latencyMs: 100,
  estimatedCostUsd: 0.01,
  ...extra,
});

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
    expect(s).toEqual({ passed: 2, failed: 1, errored: 1, passRate: 0.5, avgLatencyMs: 200, totalCostUsd: 1 });
  });

  it("gives a null total cost when a run's cost is unknown, never 0", () => {
    expect(summarizeTarget([result("pass", "a", { estimatedCostUsd: null })]).totalCostUsd).toBeNull();
    expect(summarizeTarget([])).toMatchObject({ passRate: 0, avgLatencyMs: 0, totalCostUsd: 0 });
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
    expect(report.summary.changes).toEqual({ fixed: 1, regressed: 1, outputChanged: 1, unchanged: 1 });
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
    expect(report.summary.changes).toEqual({ fixed: 0, regressed: 0, outputChanged: 0, unchanged: 0 });
    expect(report.contractValidity).toEqual({ valid: true, violations: [], breakingChanges: [] });
    expect(report.summary.text).toBe("1 case: draft 1/1 passed.");
  });
});
