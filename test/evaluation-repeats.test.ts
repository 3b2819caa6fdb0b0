/**
 * Evaluations people can gate a release on, over real HTTP in both run modes: repeated attempts
 * with pass rates and verdicts (passed, failed, flaky), the change summary over pass rates (fixed,
 * regressed, still failing, flaky), totals per target (tokens, cost, latency percentiles), two runs
 * compared case by case, and a run cancelled midway. The model is an OpenAI-protocol stub whose
 * answer depends on the case and on how many times it was asked, so every verdict is known.
 */

import { type OpenAIStub, type ReceivedRequest, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient, type EvaluationRun, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { twoVersionSkill } from "./support/evaluation-fixture.js";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { PROVIDER_MODES, type RunningKiln } from "./support/provider-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: bodies are asserted field by field.
type Loose = any;

const REPEATS = 5;
/** At most this many calls to the stub's models at once, whatever the workers' concurrency. */
const CAP = 3;
const MODEL_CONCURRENCY = JSON.stringify({ "stub/*": CAP });

/**
 * The system prompt is "<version> <case>": published ("P") and draft ("D") answer "yes" or "no"
 * per case; "wobbly" on the draft says "no" to one call in five (whatever the order of the calls),
 * "slow" takes its time (for the cancel).
 */
function answerOf(counts: Map<string, number>) {
  return (request: ReceivedRequest) => {
    const messages: { role?: string; content?: unknown }[] = request.body?.messages ?? [];
    const system = String(messages.find((m) => m.role === "system")?.content ?? "");
    // The llm_judge: a fixed grade, in the JSON its response format asks for.
    if (system.startsWith("You grade the output")) {
      return stubReply.text(JSON.stringify({ score: 0.75, reason: "says yes politely" }));
    }
    const n = (counts.get(system) ?? 0) + 1;
    counts.set(system, n);
    const [version, name] = system.split(" ");
    const table: Record<string, [string, string]> = {
      regress: ["yes", "no"],
      fix: ["no", "yes"],
      broken: ["no", "no"],
      steady: ["yes", "yes"],
    };
    if (name === "wobbly") return stubReply.text(version === "D" && n % 5 === 0 ? "no" : "yes");
    if (name === "slow") return { ...stubReply.text("yes"), delayMs: 150 };
    const [published, draft] = table[name ?? ""] ?? ["no", "no"];
    return stubReply.text(version === "P" ? published : draft);
  };
}

const providers = (stub: OpenAIStub) =>
  JSON.stringify([
    {
      id: "stub",
      baseUrl: stub.baseUrl,
      models: [
        { model: "judged", inputPerMTokUsd: 1, outputPerMTokUsd: 2, jsonSchema: true },
        { model: "unpriced", jsonSchema: true },
      ],
    },
  ]);

describe.each(PROVIDER_MODES)("evaluation repeats, totals, compare and cancel in $name", (mode) => {
  let stub: OpenAIStub;
  let running: RunningKiln;
  let api: TestClient;
  let flow: FlowResult;
  let skillId: string;
  let caseIds: Record<string, string>;
  let repeated: EvaluationRun;

  beforeAll(async () => {
    stub = await startOpenAIStub({ respond: answerOf(new Map()), latencyMs: 20 });
    running = await mode.start({ OPENAI_COMPATIBLE_PROVIDERS: providers(stub), MODEL_CONCURRENCY });
    api = createTestClient(running.base);
    flow = await runIdentityFlow(running.base, ["skills:read", "evaluations:read", "evaluations:write", "runs:read"]);
    ({ skillId } = await twoVersionSkill(api, flow, {
      name: "Yes sayer",
      model: "stub/judged",
      published: "P {{name}}",
      draft: "D {{name}}",
    }));
    const names = ["regress", "fix", "broken", "wobbly", "steady"];
    const cases = await api.createEvaluationCases(
      flow.apiKey,
      undefined,
      skillId,
      names.map((name) => ({ name, input: { name }, assertions: [{ type: "contains" as const, value: "yes" }] })),
    );
    caseIds = Object.fromEntries(cases.map((c) => [c.name, c.id]));
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
    await stub?.close();
  });

  const resultOf = (run: EvaluationRun, name: string) => run.results.find((r) => r.caseId === caseIds[name]);

  it("runs every case that many times per target, with a pass rate and a verdict per case", async () => {
    const started = await api.startEvaluation(flow.apiKey, undefined, skillId, {
      caseIds: ["regress", "fix", "broken", "wobbly", "steady"].map((n) => caseIds[n] ?? ""),
      repeats: REPEATS,
    });
    repeated = await api.waitForEvaluation(flow.token, skillId, started.id, { timeoutMs: 60_000 });
    expect(repeated.status, JSON.stringify(repeated.summary)).toBe("completed");
    expect(repeated.repeats).toBe(REPEATS);
    const verdicts = Object.fromEntries(
      Object.keys(caseIds).map((name) => {
        const r = resultOf(repeated, name);
        return [
          name,
          [r?.byTarget.published?.verdict, r?.byTarget.draft?.verdict, r?.byTarget.draft?.passRate, r?.change],
        ];
      }),
    );
    expect(verdicts).toEqual({
      regress: ["passed", "failed", 0, "regressed"],
      fix: ["failed", "passed", 1, "fixed"],
      broken: ["failed", "failed", 0, "unchanged"],
      wobbly: ["passed", "flaky", 0.8, "unchanged"],
      steady: ["passed", "passed", 1, "unchanged"],
    });
    const wobbly = resultOf(repeated, "wobbly")?.byTarget.draft;
    expect(wobbly?.outcome).toBe("fail");
    expect(wobbly?.attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(wobbly?.attempts.filter((a) => a.outcome === "fail")).toHaveLength(1);
    // Every attempt is its own stored skill run.
    const runIds = repeated.results.flatMap((r) =>
      Object.values(r.byTarget).flatMap((t) => t?.attempts.map((a) => a.runId) ?? []),
    );
    expect(runIds).toHaveLength(5 * 2 * REPEATS);
    expect(new Set(runIds).size).toBe(runIds.length);
    const one = await api.get<Loose>(`/api/skill-runs/${wobbly?.attempts[4]?.runId}`, { token: flow.token });
    expect(one.status, one.text).toBe(200);
    expect(one.body.output.text).toMatch(/^(yes|no)$/);
  });

  it("keeps the model calls within the per-model cap (MODEL_CONCURRENCY)", () => {
    // 50 attempts with 4 workers: without the cap the stub would see 4 at once.
    expect(stub.maxInFlight()).toBeLessThanOrEqual(CAP);
    expect(stub.maxInFlight()).toBeGreaterThan(1);
  });

  it("counts fixed, regressed, still failing and flaky, and says so in one line", () => {
    expect(repeated.summary?.changes).toEqual({
      fixed: 1,
      regressed: 1,
      outputChanged: 0,
      unchanged: 3,
      stillFailing: 1,
      flaky: 1,
    });
    expect((repeated.summary as Loose).text).toBe(
      `5 cases × ${REPEATS} attempts: draft 2/5 passed (1 flaky), published 3/5 passed; 1 fixed, 1 regressed, 0 output changed, 3 unchanged (1 still failing, 1 flaky among them).`,
    );
  });

  it("reports tokens, cost and latency percentiles per target", () => {
    for (const label of ["draft", "published"] as const) {
      const s = (repeated.summary as Loose).byTarget[label];
      expect(s.attempts).toBe(5 * REPEATS);
      expect(s.usage.inputTokens).toBeGreaterThan(0);
      expect(s.usage.outputTokens).toBeGreaterThan(0);
      // Priced at 1 and 2 USD per million tokens: the total is exactly what the tokens cost.
      expect(s.totalCostUsd).toBeCloseTo((s.usage.inputTokens * 1 + s.usage.outputTokens * 2) / 1e6, 12);
      expect(s).toMatchObject({ unpricedRuns: 0, judge: { runs: 0 } });
      expect(s.latencyMs.p50).toBeLessThanOrEqual(s.latencyMs.p95);
      expect(s.latencyMs.p95).toBeLessThanOrEqual(s.latencyMs.p99);
    }
  });

  it("compares two runs case by case", async () => {
    const started = await api.startEvaluation(flow.apiKey, undefined, skillId, {
      targets: ["draft"],
      caseIds: [caseIds.regress ?? "", caseIds.steady ?? ""],
    });
    const head = await api.waitForEvaluation(flow.token, skillId, started.id, { timeoutMs: 30_000 });
    expect(head.status).toBe("completed");
    const res = await api.get<Loose>(
      `/api/skills/${skillId}/evaluations/compare?base=${repeated.id}&head=${head.id}&target=draft`,
      { token: flow.apiKey },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.base).toMatchObject({ evaluationRunId: repeated.id, target: "draft", repeats: REPEATS });
    expect(res.body.head).toMatchObject({ evaluationRunId: head.id, target: "draft", repeats: 1 });
    const byCase = Object.fromEntries(res.body.results.map((r: Loose) => [r.caseId, r]));
    expect(byCase[caseIds.steady ?? ""]).toMatchObject({
      base: { verdict: "passed", passRate: 1, attempts: REPEATS },
      head: { verdict: "passed", passRate: 1, attempts: 1 },
      change: "unchanged",
    });
    expect(byCase[caseIds.wobbly ?? ""]).toMatchObject({ base: { verdict: "flaky" }, head: null, change: null });
    expect(res.body.summary.text).toBe(
      "2 cases compared on draft: 0 fixed, 0 regressed, 0 output changed, 2 unchanged (1 still failing among them); 3 in one run only.",
    );

    const refused = await api.get<Loose>(`/api/skills/${skillId}/evaluations/compare?base=${repeated.id}`, {
      token: flow.apiKey,
    });
    expect(refused.status).toBe(400);
    const missing = await api.get<Loose>(
      `/api/skills/${skillId}/evaluations/compare?base=${repeated.id}&head=evr_nope`,
      {
        token: flow.apiKey,
      },
    );
    expect(missing.status).toBe(404);
  });

  it("grades with an llm_judge whose calls are stored runs, counted in the totals", async () => {
    const [judged] = await api.createEvaluationCases(flow.apiKey, undefined, skillId, [
      {
        name: "judged",
        input: { name: "steady" },
        assertions: [
          { type: "llm_judge", rubric: "Says yes", model: "stub/judged", threshold: 0.7 },
          { type: "llm_judge", rubric: "Says yes", model: "stub/unpriced", threshold: 0.8 },
        ],
      },
    ]);
    const started = await api.startEvaluation(flow.apiKey, undefined, skillId, {
      caseIds: [judged?.id ?? ""],
      targets: ["draft"],
      repeats: 2,
    });
    const run = await api.waitForEvaluation(flow.token, skillId, started.id, { timeoutMs: 30_000 });
    const result = run.results[0]?.byTarget.draft;
    // 0.75 passes the 0.7 threshold and not the 0.8 one.
    expect(result?.assertions.map((a) => [a.type, a.passed, a.message])).toEqual([
      ["llm_judge", true, "score 0.75 ≥ 0.7: says yes politely"],
      ["llm_judge", false, "score 0.75 < 0.8: says yes politely"],
    ]);
    expect(result?.verdict).toBe("failed");
    const judgeRuns = result?.attempts.flatMap((a) => a.judgeRuns) ?? [];
    expect(judgeRuns).toHaveLength(4);
    const [first] = judgeRuns;
    const stored = await api.get<Loose>(`/api/judge-runs/${first?.runId}`, { token: flow.token });
    expect(stored.status, stored.text).toBe(200);
    expect(stored.body).toMatchObject({
      id: first?.runId,
      kind: "judge",
      evaluationRunId: started.id,
      status: "succeeded",
      model: "stub/judged",
      usage: first?.usage,
      estimatedCostUsd: first?.estimatedCostUsd,
    });
    expect(stored.body.input.user).toContain("Says yes");
    expect(first?.estimatedCostUsd).toBeGreaterThan(0);
    // The unpriced judge makes the total unknown, never $0: the priced part and the count say what is known.
    const totals = (run.summary as Loose).byTarget.draft;
    expect(totals.judge.runs).toBe(4);
    expect(totals.totalCostUsd).toBeNull();
    expect(totals.unpricedRuns).toBe(2);
    expect(totals.judge.estimatedCostUsd).toBeNull();
    const pricedJudges = judgeRuns.reduce((sum, j) => sum + (j.estimatedCostUsd ?? 0), 0);
    const skillRuns = result?.attempts.reduce((sum, a) => sum + (a.estimatedCostUsd ?? 0), 0) ?? 0;
    expect(totals.pricedCostUsd).toBeCloseTo(pricedJudges + skillRuns, 12);
    expect(totals.usage.inputTokens).toBeGreaterThan(totals.judge.usage.inputTokens);
    // Another organization's key cannot read the judge run.
    const other = await runIdentityFlow(running.base, ["runs:read"]);
    expect((await api.get<Loose>(`/api/judge-runs/${first?.runId}`, { token: other.apiKey })).status).toBe(404);
  });

  it("refuses repeats outside 1–20, naming the field, and starts nothing", async () => {
    for (const repeats of [0, 21, 2.5]) {
      const res = await api.post<Loose>(`/api/skills/${skillId}/evaluations/run`, { repeats }, { token: flow.apiKey });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe("invalid_argument");
      expect(res.body.error.details[0].field).toBe("repeats");
    }
  });

  it("cancels a run midway: pending attempts never run, the report keeps what finished", async () => {
    const { token } = flow;
    const [slow] = await api.createEvaluationCases(flow.apiKey, undefined, skillId, [
      { name: "slow", input: { name: "slow" }, assertions: [{ type: "contains", value: "yes" }] },
    ]);
    const started = await api.startEvaluation(flow.apiKey, undefined, skillId, {
      caseIds: [slow?.id ?? ""],
      targets: ["draft"],
      repeats: 20,
    });
    // Wait for the first attempts to finish, then cancel.
    for (let i = 0; i < 200; i++) {
      const run = await api.getEvaluation(token, skillId, started.id);
      if (run.results.length > 0) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const cancel = await api.post<Loose>(
      `/api/skills/${skillId}/evaluations/${started.id}/cancel`,
      {},
      { token: flow.apiKey },
    );
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.body.status).toBe("cancelled");
    expect(cancel.body.summary.text).toMatch(/^Cancelled: 1 case × 20 attempts: draft/);
    const callsAtCancel = stub.requests.length;
    await new Promise((r) => setTimeout(r, 1_500));
    const after = await api.getEvaluation(token, skillId, started.id);
    expect(after.status).toBe("cancelled");
    const attempts = after.results[0]?.byTarget.draft?.attempts ?? [];
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.length).toBeLessThan(20);
    // What was in flight at the cancel may finish; nothing new starts.
    expect(stub.requests.length - callsAtCancel).toBeLessThanOrEqual(8);
    expect(after.summary?.byTarget.draft).toMatchObject({ attempts: attempts.length });

    const again = await api.post<Loose>(
      `/api/skills/${skillId}/evaluations/${started.id}/cancel`,
      {},
      { token: flow.apiKey },
    );
    expect(again.status).toBe(200);
    const done = await api.post<Loose>(
      `/api/skills/${skillId}/evaluations/${repeated.id}/cancel`,
      {},
      { token: flow.apiKey },
    );
    expect(done.status).toBe(409);
    expect(done.body.error.code).toBe("failed_precondition");
  });
});
