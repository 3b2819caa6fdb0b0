/**
 * The attach flow of docs/concepts.md "The attach flow", step 5, over real HTTP in both run modes: a skill whose draft differs
 * from its published version is evaluated against both; each case's outcome per target, the change
 * from published to draft, the skill runs behind them, the summary and the contract check (the
 * draft needs a new input, drops an output field and retypes another) are asserted. The model is
 * the built-in local/echo: a json_schema answer holds the rendered system prompt in its strings.
 */

import {
  createTestClient,
  type EvaluationCase,
  type EvaluationRun,
  type EvaluationTargetResult,
  type Skill,
  type TestClient,
} from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { RUN_MODES, type RunningKiln } from "./support/run-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: run bodies are asserted field by field.
type Loose = any;

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);
const SCOPES = ["prompts:read", "prompts:write", "skills:read", "skills:write", "runs:read"];

/** Published: three string fields. Draft: `mood` gone, `score` an integer. */
const PUBLISHED_FORMAT = {
  type: "json_schema",
  name: "greeting",
  schema: {
    type: "object",
    properties: { greeting: { type: "string" }, mood: { type: "string" }, score: { type: "string" } },
    required: ["greeting", "mood", "score"],
  },
};
const DRAFT_FORMAT = {
  type: "json_schema",
  name: "greeting",
  schema: {
    type: "object",
    properties: { greeting: { type: "string" }, score: { type: "integer" } },
    required: ["greeting", "score"],
  },
};

describe.each(RUN_MODES)("evaluating a skill's draft against its published version in $name", (mode) => {
  let running: RunningKiln;
  let api: TestClient;
  let flow: FlowResult;
  let skill: Skill;
  let cases: EvaluationCase[];
  let evaluation: EvaluationRun;

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    flow = await runIdentityFlow(running.base, SCOPES);
    const { token, organizationId } = flow;
    const hello = await api.createPublishedPrompt(token, organizationId, {
      systemPrompt: "Hello {{name}}",
      variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      responseFormat: PUBLISHED_FORMAT,
    });
    const goodbye = await api.createPublishedPrompt(token, organizationId, {
      systemPrompt: "Goodbye {{name}} of {{city}}",
      variablesSchema: {
        type: "object",
        properties: { name: { type: "string" }, city: { type: "string" } },
        required: ["name", "city"],
      },
      responseFormat: DRAFT_FORMAT,
    });
    // Steps 1–3 of the attach flow: compose, publish; then a draft that says goodbye instead.
    const created = await api.createSkill(token, organizationId, { name: "Greeter" });
    await api.replaceSkillPrompts(token, created.draftVersionId ?? "", [{ promptId: hello.prompt.id }]);
    await api.publishSkill(token, created.id);
    const draft = await api.post<{ id: string }>(`/api/skills/${created.id}/versions`, {}, { token });
    expect(draft.status, draft.text).toBe(201);
    skill = await api.replaceSkillPrompts(token, draft.body.id, [{ promptId: goodbye.prompt.id }]);
    expect(skill.draftVersionId).toBe(draft.body.id);
    expect(skill.publishedVersionId).toEqual(expect.stringMatching(/^sv_/));
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  it("stores a batch of cases (201) and lists them", async () => {
    cases = await api.createEvaluationCases(flow.token, flow.organizationId, skill.id, [
      // Fails on published ("Hello Ada"), passes on the draft: fixed.
      {
        name: "says goodbye",
        input: { name: "Ada", city: "Paris" },
        assertions: [{ type: "contains", value: "Goodbye Ada" }],
      },
      // Passes on published, fails on the draft: regressed.
      {
        name: "says hello",
        input: { name: "Grace", city: "Oslo" },
        assertions: [{ type: "contains", value: "Hello Grace" }],
      },
      // Passes on both with different outputs: output changed.
      {
        name: "names the person",
        input: { name: "Linus", city: "Helsinki" },
        assertions: [{ type: "contains", value: "Linus" }],
      },
      // A number only the draft gives: fixed.
      {
        name: "scores zero",
        input: { name: "Alan", city: "London" },
        assertions: [{ type: "json_path", path: "$.score", equals: 0 }],
      },
      // No city: the draft, which requires one, cannot run it: regressed, with an error.
      { name: "no city", input: { name: "Edsger" }, assertions: [{ type: "contains", value: "Edsger" }] },
    ]);
    expect(cases.map((c) => c.name)).toEqual([
      "says goodbye",
      "says hello",
      "names the person",
      "scores zero",
      "no city",
    ]);
    const list = await api.get<{ data: EvaluationCase[]; nextCursor: string | null }>(
      `/api/skills/${skill.id}/evaluation-cases`,
      { token: flow.token },
    );
    expect(list.status, list.text).toBe(200);
    expect(list.headers["x-api-stability"]).toBe("beta");
    expect(list.body).toEqual({ data: [...cases].reverse(), nextCursor: null });
  });

  it("starts an evaluation run with an evaluations:write key (202) and completes it", async () => {
    const key = await api.createApiKey(flow.token, flow.organizationId, ["evaluations:write"]);
    const res = await api.post<Loose>(`/api/skills/${skill.id}/evaluations/run`, {}, { token: key.key });
    expect(res.status, res.text).toBe(202);
    expect(res.headers["x-api-stability"]).toBe("beta");
    expect(res.body).toEqual({
      id: expect.stringMatching(/^evr_[0-9A-Za-z]+$/),
      evaluationRunId: res.body.id,
      status: "queued",
    });
    evaluation = await api.waitForEvaluation(flow.token, skill.id, res.body.id, { timeoutMs: 30_000 });
    expect(evaluation.status, JSON.stringify(evaluation)).toBe("completed");
    expect(evaluation).toMatchObject({
      id: res.body.id,
      evaluationRunId: res.body.id,
      skillId: skill.id,
      createdAt: ISO,
      completedAt: ISO,
    });
    expect(Date.parse(evaluation.completedAt ?? "")).toBeGreaterThanOrEqual(Date.parse(evaluation.createdAt));
    expect([...evaluation.targets].sort((a, b) => a.label.localeCompare(b.label))).toEqual([
      { label: "draft", skillVersionId: skill.draftVersionId },
      { label: "published", skillVersionId: skill.publishedVersionId },
    ]);
  });

  it("gives each case its outcome on both targets and the change from published to draft", async () => {
    expect(evaluation.results.map((r) => r.caseId)).toEqual(cases.map((c) => c.id));
    const byName = Object.fromEntries(cases.map((c, i) => [c.name, evaluation.results[i]]));
    const outcomes = Object.fromEntries(
      Object.entries(byName).map(([name, r]) => [
        name,
        [r?.byTarget.published?.outcome, r?.byTarget.draft?.outcome, r?.change],
      ]),
    );
    expect(outcomes).toEqual({
      "says goodbye": ["fail", "pass", "fixed"],
      "says hello": ["pass", "fail", "regressed"],
      "names the person": ["pass", "pass", "output_changed"],
      "scores zero": ["fail", "pass", "fixed"],
      "no city": ["pass", "error", "regressed"],
    });

    const greet = (name: string) => ({ greeting: `Hello ${name}`, mood: `Hello ${name}`, score: `Hello ${name}` });
    const ada = byName["says goodbye"];
    expect(ada?.byTarget.published).toEqual({
      outcome: "fail",
      runId: expect.stringMatching(/^srun_/),
      output: { text: JSON.stringify(greet("Ada")), json: greet("Ada") },
      assertions: [{ type: "contains", passed: false, message: expect.any(String) }],
      contractValid: true,
      latencyMs: expect.any(Number),
      estimatedCostUsd: 0,
      usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number) },
      judgeRuns: [],
      attempts: [
        {
          attempt: 1,
          outcome: "fail",
          runId: ada?.byTarget.published?.runId,
          latencyMs: expect.any(Number),
          estimatedCostUsd: 0,
          usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number) },
          judgeRuns: [],
        },
      ],
      passRate: 0,
      verdict: "failed",
    });
    expect(ada?.byTarget.draft).toMatchObject({
      outcome: "pass",
      output: { json: { greeting: "Goodbye Ada of Paris", score: 0 } },
      assertions: [{ type: "contains", passed: true, message: expect.any(String) }],
      contractValid: true,
      estimatedCostUsd: 0,
    });
    expect(byName["scores zero"]?.byTarget.draft?.assertions).toEqual([
      { type: "json_path", passed: true, message: expect.any(String) },
    ]);
    const noCity = byName["no city"]?.byTarget.draft as EvaluationTargetResult;
    expect(noCity).toMatchObject({ outcome: "error", runId: null, output: null, contractValid: null });
    expect(noCity.error).toEqual({ code: "invalid_argument", message: expect.stringMatching(/input/) });
  });

  it("links every outcome that ran to its stored skill run", async () => {
    const versionOf = Object.fromEntries(evaluation.targets.map((t) => [t.label, t.skillVersionId]));
    let checked = 0;
    for (const [i, result] of evaluation.results.entries()) {
      for (const [label, outcome] of Object.entries(result.byTarget)) {
        if (!outcome?.runId) continue;
        const run = await api.get<Loose>(`/api/skill-runs/${outcome.runId}`, { token: flow.token });
        expect(run.status, run.text).toBe(200);
        expect(run.body).toMatchObject({
          id: outcome.runId,
          kind: "skill",
          organizationId: flow.organizationId,
          status: "succeeded",
          skillId: skill.id,
          skillVersionId: versionOf[label],
          input: { input: cases[i]?.input },
          output: outcome.output,
          evaluationRunId: evaluation.id,
          estimatedCostUsd: outcome.estimatedCostUsd,
        });
        expect(run.body.latencyMs).toBe(outcome.latencyMs);
        checked++;
      }
    }
    // Five cases on two targets, less the draft run that could not start.
    expect(checked).toBe(9);
    const runIds = evaluation.results.flatMap((r) => Object.values(r.byTarget).map((t) => t?.runId));
    expect(new Set(runIds.filter(Boolean)).size).toBe(9);
  });

  it("summarizes both targets and the changes", async () => {
    const summary = evaluation.summary;
    const totals = {
      flaky: 0,
      avgLatencyMs: expect.any(Number),
      latencyMs: { p50: expect.any(Number), p95: expect.any(Number), p99: expect.any(Number) },
      usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number) },
      totalCostUsd: 0,
      pricedCostUsd: 0,
      unpricedRuns: 0,
      judge: { runs: 0, usage: { inputTokens: 0, outputTokens: 0 }, estimatedCostUsd: 0 },
    };
    expect(summary?.repeats).toBe(1);
    expect(summary?.byTarget.published).toEqual({
      passed: 3,
      failed: 2,
      errored: 0,
      passRate: 0.6,
      attempts: 5,
      ...totals,
    });
    // The case that could not run has no run: 4 attempts ran, 5 were made.
    expect(summary?.byTarget.draft).toEqual({
      passed: 3,
      failed: 1,
      errored: 1,
      passRate: 0.6,
      attempts: 5,
      ...totals,
    });
    expect(summary?.changes).toEqual({
      fixed: 2,
      regressed: 2,
      outputChanged: 1,
      unchanged: 0,
      stillFailing: 0,
      flaky: 0,
    });
    expect(summary?.text).toEqual(expect.stringContaining("2 fixed"));
  });

  it("reports the draft's breaking contract changes, while every output kept its own version's schema", async () => {
    const validity = evaluation.contractValidity;
    expect(validity?.valid).toBe(false);
    expect(validity?.violations).toEqual([]);
    const kinds = validity?.breakingChanges.map((c) => [c.kind, c.path]).sort();
    expect(kinds).toEqual([
      ["input_required_added", "/city"],
      ["output_field_removed", "/mood"],
      ["output_type_changed", "/score"],
    ]);
    for (const change of validity?.breakingChanges ?? []) expect(change.message).toEqual(expect.any(String));
  });

  it("evaluates one target alone, without changes or breaking changes", async () => {
    const started = await api.startEvaluation(flow.token, flow.organizationId, skill.id, {
      targets: ["draft"],
      caseIds: [cases[0]?.id ?? "", cases[1]?.id ?? ""],
    });
    const done = await api.waitForEvaluation(flow.token, skill.id, started.id);
    expect(done.status).toBe("completed");
    expect(done.targets).toEqual([{ label: "draft", skillVersionId: skill.draftVersionId }]);
    expect(done.results.map((r) => [r.caseId, r.byTarget.draft?.outcome, r.change])).toEqual([
      [cases[0]?.id, "pass", null],
      [cases[1]?.id, "fail", null],
    ]);
    expect(done.summary?.byTarget).toEqual({ draft: expect.objectContaining({ passed: 1, failed: 1, passRate: 0.5 }) });
    expect(done.summary?.changes).toEqual({
      fixed: 0,
      regressed: 0,
      outputChanged: 0,
      unchanged: 0,
      stillFailing: 0,
      flaky: 0,
    });
    expect(done.contractValidity).toEqual({ valid: true, violations: [], breakingChanges: [] });
    // The first run is as it was.
    expect(await api.getEvaluation(flow.token, skill.id, evaluation.id)).toEqual(evaluation);
  });
});
