import { createMemoryStore } from "@kiln/kit/store/memory";
import { describe, expect, it } from "vitest";
import { ruleMatchesGeneration } from "./generations.js";
import { type OnlineRuleDoc, onlineCollections } from "./online-store.js";
import { sweepScores } from "./retention.js";
import { type CompletedRun, isSampled, isScorableRun, ruleMatchesRun, sampleValue } from "./sampling.js";
import { summarize } from "./scores.js";

const rule = (target: Partial<OnlineRuleDoc["target"]>, sampleRate = 1): OnlineRuleDoc => ({
  _id: "olr_00000000000000000000000000000001",
  organizationId: "org_1",
  name: "r",
  target: { kind: "prompt", id: "prm_1", label: "", filter: null, ...target },
  sampleRate,
  assertions: [],
  enabled: true,
  createdBy: "usr_1",
  createdAt: new Date(0),
  updatedAt: new Date(0),
});

const run = (fields: Partial<CompletedRun> = {}): CompletedRun => ({
  runId: "run_1",
  kind: "prompt",
  organizationId: "org_1",
  status: "succeeded",
  promptId: "prm_1",
  skillId: "",
  agentId: "",
  label: "",
  ...fields,
});

describe("which runs a rule samples", () => {
  it("matches the rule's kind and id, and its label when it names one", () => {
    expect(ruleMatchesRun(rule({}), run())).toBe(true);
    expect(ruleMatchesRun(rule({}), run({ label: "staging" }))).toBe(true);
    expect(ruleMatchesRun(rule({ label: "production" }), run({ label: "staging" }))).toBe(false);
    expect(ruleMatchesRun(rule({ label: "production" }), run({ label: "production" }))).toBe(true);
    expect(ruleMatchesRun(rule({ label: "production" }), run())).toBe(false);
    expect(ruleMatchesRun(rule({ id: "prm_2" }), run())).toBe(false);
    expect(ruleMatchesRun(rule({ kind: "skill", id: "prm_1" }), run())).toBe(false);
    expect(ruleMatchesRun(rule({ kind: "agent", id: "agt_1" }), run({ kind: "agent", agentId: "agt_1" }))).toBe(true);
  });

  it("never scores judge runs or runs an evaluation made", () => {
    expect(isScorableRun(run({ kind: "judge" }))).toBe(false);
    expect(isScorableRun(run({ evaluationRunId: "evr_1" }))).toBe(false);
    expect(isScorableRun(run())).toBe(true);
  });

  it("samples by a fixed hash: the same decision every time, about the rate over many runs", () => {
    const r = rule({}, 0.25);
    const ids = Array.from({ length: 4000 }, (_, i) => `run_${i}`);
    const picked = ids.filter((id) => isSampled(r, id));
    expect(ids.filter((id) => isSampled(r, id))).toEqual(picked);
    expect(Math.abs(picked.length / ids.length - 0.25)).toBeLessThan(0.03);
    expect(sampleValue(r._id, "run_1")).toBeGreaterThanOrEqual(0);
    expect(sampleValue(r._id, "run_1")).toBeLessThan(1);
    expect(ids.every((id) => isSampled(rule({}, 1), id))).toBe(true);
  });

  it("takes the generations a traces rule's filter matches, every field given", () => {
    const g = { spanId: "s", name: "chat", requestModel: "gpt-4o", responseModel: "gpt-4o-2024", sessionId: "x" };
    const traces = (filter: Partial<{ name: string; model: string; sessionId: string }>) =>
      rule({ kind: "traces", id: "", filter: { name: "", model: "", sessionId: "", ...filter } });
    expect(ruleMatchesGeneration(traces({}), g)).toBe(true);
    expect(ruleMatchesGeneration(traces({ model: "gpt-4o-2024" }), g)).toBe(true);
    expect(ruleMatchesGeneration(traces({ model: "gpt-4o", sessionId: "y" }), g)).toBe(false);
    expect(ruleMatchesGeneration(traces({ name: "embed" }), g)).toBe(false);
    expect(ruleMatchesGeneration(rule({}), g)).toBe(false);
  });
});

describe("the score summary", () => {
  it("sums per bucket, version and label: pass rate, mean judge score of the judged, costs", () => {
    const at = (iso: string) => new Date(iso);
    const docs = [
      {
        occurredAt: at("2026-01-01T10:05:00Z"),
        versionId: "v1",
        label: "production",
        passed: true,
        score: 1,
        judgeCostUsd: 0.1,
        runCostUsd: 1,
      },
      {
        occurredAt: at("2026-01-01T10:55:00Z"),
        versionId: "v1",
        label: "production",
        passed: false,
        score: 0.5,
        judgeCostUsd: 0.2,
        runCostUsd: null,
      },
      {
        occurredAt: at("2026-01-01T10:30:00Z"),
        versionId: "v1",
        label: "production",
        passed: true,
        score: null,
        judgeCostUsd: null,
        runCostUsd: 2,
      },
      {
        occurredAt: at("2026-01-01T10:10:00Z"),
        versionId: "v2",
        label: "",
        passed: true,
        score: null,
        judgeCostUsd: null,
        runCostUsd: null,
      },
      {
        occurredAt: at("2026-01-01T09:59:59Z"),
        versionId: "v1",
        label: "production",
        passed: false,
        score: 0,
        judgeCostUsd: 0,
        runCostUsd: 0,
      },
    ];
    const buckets = summarize(docs, 3_600_000);
    expect(buckets.map((b) => [b.start.toISOString(), b.versionId, b.label, b.count])).toEqual([
      ["2026-01-01T09:00:00.000Z", "v1", "production", 1],
      ["2026-01-01T10:00:00.000Z", "v1", "production", 3],
      ["2026-01-01T10:00:00.000Z", "v2", "", 1],
    ]);
    expect(buckets[1]).toMatchObject({ passed: 2, judged: 2, meanScore: 0.75, runCostUsd: 3 });
    expect(buckets[1]?.passRate).toBeCloseTo(2 / 3, 12);
    expect(buckets[1]?.judgeCostUsd).toBeCloseTo(0.3, 12);
    expect(buckets[2]).toMatchObject({ meanScore: null, judged: 0, passRate: 1 });
    expect(summarize(docs, 86_400_000)).toHaveLength(2);
  });
});

describe("score retention", () => {
  it("deletes the scores (and their keys) stored before the cutoff, nothing newer", async () => {
    const c = onlineCollections(createMemoryStore());
    const score = (id: string, createdAt: Date) => ({
      _id: id,
      organizationId: "org_1",
      ruleId: "olr_1",
      targetKey: id,
      targetType: "run" as const,
      runId: id,
      traceId: "",
      spanId: "",
      promptId: "prm_1",
      skillId: "",
      agentId: "",
      versionId: "pv_1",
      label: "",
      passed: true,
      score: null,
      assertionsJson: "[]",
      judgeRuns: [],
      judgeCostUsd: null,
      runCostUsd: null,
      occurredAt: createdAt,
      createdAt,
    });
    const old = new Date("2026-01-01T00:00:00Z");
    const recent = new Date("2026-03-01T00:00:00Z");
    await c.scores.insertMany([score("osc_old", old), score("osc_new", recent)]);
    await c.scored.insertMany([
      { _id: "olr_1:osc_old", createdAt: old },
      { _id: "olr_1:osc_new", createdAt: recent },
    ]);
    expect(await sweepScores(c, new Date("2026-02-01T00:00:00Z"))).toBe(1);
    expect((await c.scores.find({})).map((s) => s._id)).toEqual(["osc_new"]);
    expect((await c.scored.find({})).map((k) => k._id)).toEqual(["olr_1:osc_new"]);
  });
});
