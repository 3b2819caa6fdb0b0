/**
 * Online evaluation (docs/observability.md "Online evaluation"), in both run modes with real
 * servers: a rule at sample rate 0.3 over 120 labelled runs scores exactly the runs its documented
 * hash picks (a share within ±0.02 of 0.3 over 10,000 ids), once each,
 * and none of the runs outside its label; an llm_judge rule's judge calls are stored judge runs
 * whose cost the score carries; scores are listed and summarised; another organization reads 404
 * or nothing; bad rules are refused and change nothing. The judge model is the OpenAI stub with a
 * priced model (a remote provider cannot exist here).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadProvidersConfig } from "@kiln/execution/config";
import { openEmbeddedData } from "@kiln/launcher/data-dir";
import { type OpenAIStub, type ReceivedRequest, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";
import { call, eventually, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

const RATE = 0.3;
const RUNS = 120;
/** The hash's share over 10,000 ids: ±0.02 is about 4.4 binomial standard deviations. */
const TOLERANCE = 0.02;

/** The documented sampling decision: SHA-256 of "<ruleId>\n<runId>", first 4 bytes big-endian / 2^32 < rate. */
const sampled = (ruleId: string, runId: string, rate: number) =>
  createHash("sha256").update(`${ruleId}\n${runId}`).digest().readUInt32BE(0) / 2 ** 32 < rate;

function respond(request: ReceivedRequest) {
  const messages: { role?: string; content?: unknown }[] = request.body?.messages ?? [];
  const system = String(messages.find((m) => m.role === "system")?.content ?? "");
  if (system.startsWith("You grade the output")) return stubReply.json({ score: 0.75, reason: "mostly right" });
  return stubReply.text("Paris is the capital");
}

const providers = (stub: OpenAIStub) =>
  JSON.stringify([
    {
      id: "stub",
      baseUrl: stub.baseUrl,
      models: [{ model: "judged", inputPerMTokUsd: 1, outputPerMTokUsd: 2, jsonSchema: true }],
    },
  ]);

const modes = [
  {
    name: "embedded mode (SQLite, in-process bus)",
    async start(stub: OpenAIStub) {
      const dir = mkdtempSync(join(tmpdir(), "kiln-online-"));
      const { kiln, baseUrl } = await startEmbedded({
        data: await openEmbeddedData(dir),
        providers: loadProvidersConfig({ OPENAI_COMPATIBLE_PROVIDERS: providers(stub) }),
      });
      return {
        base: baseUrl,
        stop: async () => {
          await kiln.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: "distributed mode (FerretDB, NATS)",
    async start(stub: OpenAIStub) {
      const kiln = await startDistributed({
        mongoUrl: inject("mongoUrl"),
        natsUrl: inject("natsUrl"),
        envOf: { execution: { OPENAI_COMPATIBLE_PROVIDERS: providers(stub) } },
      });
      return { base: kiln.gatewayUrl, stop: () => kiln.stop() };
    },
  },
];

/** Every page of a list route. */
async function everything(base: string, path: string, token: string) {
  const out: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const r = await call(base, "GET", `${path}${sep}limit=200${cursor ? `&cursor=${cursor}` : ""}`, { token });
    expect(r.status).toBe(200);
    out.push(...r.body.data);
    cursor = r.body.nextCursor;
  } while (cursor);
  return out;
}

describe.each(modes)("online evaluation in $name", (mode) => {
  let stub: OpenAIStub;
  let running: { base: string; stop(): Promise<void> };
  let api: TestClient;
  let flow: FlowResult;
  let other: FlowResult;
  let base: string;
  let echoPromptId: string;
  let echoVersionId: string;
  let judgedPromptId: string;
  let sampleRule: { id: string };
  let judgeRule: { id: string };
  const labelled: string[] = [];
  const unlabelled: string[] = [];
  const judged: string[] = [];

  const runPrompt = async (promptId: string, label?: string) => {
    const r = await call(base, "POST", `/api/prompts/${promptId}/run`, {
      token: flow.token,
      body: { organizationId: flow.organizationId, variables: { name: "Ada" }, ...(label && { label }) },
    });
    expect(r.status).toBe(201);
    return r.body as { id: string; label?: string; promptVersionId: string };
  };
  const createRule = (body: Record<string, unknown>, token = flow.token) =>
    call(base, "POST", "/api/online-rules", { token, body: { organizationId: flow.organizationId, ...body } });

  beforeAll(async () => {
    stub = await startOpenAIStub({ respond });
    running = await mode.start(stub);
    base = running.base;
    api = createTestClient(base);
    flow = await runIdentityFlow(base, ["evaluations:read", "traces:write"]);
    other = await runIdentityFlow(base, ["evaluations:read"]);
    const variablesSchema = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
    const echo = await api.createPublishedPrompt(flow.token, flow.organizationId, {
      model: "local/echo",
      systemPrompt: "Hello {{name}}",
      variablesSchema,
    });
    echoPromptId = echo.prompt.id;
    echoVersionId = echo.version.id;
    const judgedPrompt = await api.createPublishedPrompt(flow.token, flow.organizationId, {
      model: "stub/judged",
      systemPrompt: "Where is {{name}}?",
      variablesSchema,
    });
    judgedPromptId = judgedPrompt.prompt.id;

    const a = await createRule({
      name: "Greets by name",
      target: { kind: "prompt", id: echoPromptId, label: "production" },
      sampleRate: RATE,
      assertions: [{ type: "contains", value: "Hello Ada" }],
    });
    expect(a.status).toBe(201);
    sampleRule = a.body;
    const j = await createRule({
      name: "Judged",
      target: { kind: "prompt", id: judgedPromptId },
      sampleRate: 1,
      assertions: [{ type: "llm_judge", rubric: "Names the capital", model: "stub/judged", threshold: 0.5 }],
    });
    expect(j.status).toBe(201);
    judgeRule = j.body;

    for (let i = 0; i < RUNS; i += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, () => runPrompt(echoPromptId, "production")));
      labelled.push(...batch.map((r) => r.id));
    }
    for (let i = 0; i < 10; i++) unlabelled.push((await runPrompt(echoPromptId)).id);
    for (let i = 0; i < 3; i++) judged.push((await runPrompt(judgedPromptId)).id);
  }, 240_000);

  afterAll(async () => {
    await running?.stop();
    await stub?.close();
  });

  it("records the label a run resolved through, and none without one", async () => {
    const r = await call(base, "GET", `/api/runs/${labelled[0]}`, { token: flow.token });
    expect(r.body).toMatchObject({ id: labelled[0], label: "production", promptVersionId: echoVersionId });
    const u = await call(base, "GET", `/api/runs/${unlabelled[0]}`, { token: flow.token });
    expect(u.status).toBe(200);
    expect(u.body.label).toBeUndefined();
  });

  it(`scores the sampled share of labelled runs (${RATE}), once each, exactly the hash's picks`, async () => {
    const expected = labelled.filter((id) => sampled(sampleRule.id, id, RATE)).sort();
    let scores: Record<string, unknown>[] = [];
    await eventually(async () => {
      scores = await everything(
        base,
        `/api/scores?organizationId=${flow.organizationId}&ruleId=${sampleRule.id}`,
        flow.token,
      );
      return scores.length >= expected.length;
    }, 60_000);
    // Nothing more arrives: a redelivered event or job would add a second score here.
    await new Promise((r) => setTimeout(r, 1_000));
    scores = await everything(
      base,
      `/api/scores?organizationId=${flow.organizationId}&ruleId=${sampleRule.id}`,
      flow.token,
    );
    const runIds = scores.map((s) => (s.target as { runId: string }).runId).sort();
    expect(runIds).toEqual(expected);
    // The share of 120 random run ids is binomial (σ ≈ 0.042): the picks are the hash's, exactly,
    // and the hash picks the rate's share of this rule's runs, shown over 10,000 ids (σ ≈ 0.0046).
    expect(runIds.length).toBeGreaterThan(0);
    expect(runIds.length).toBeLessThan(RUNS);
    const many = Array.from({ length: 10_000 }, (_, i) => `run_${i.toString(16).padStart(32, "0")}`);
    const share = many.filter((id) => sampled(sampleRule.id, id, RATE)).length / many.length;
    expect(Math.abs(share - RATE)).toBeLessThanOrEqual(TOLERANCE);
    expect(runIds.some((id) => unlabelled.includes(id))).toBe(false);
    expect(scores[0]).toMatchObject({
      ruleId: sampleRule.id,
      target: { type: "run" },
      promptId: echoPromptId,
      versionId: echoVersionId,
      label: "production",
      passed: true,
      score: null,
      judgeRuns: [],
      judgeCostUsd: null,
      assertions: [{ type: "contains", passed: true, message: expect.stringContaining("contains") }],
    });
    const one = await call(base, "GET", `/api/scores?organizationId=${flow.organizationId}&runId=${runIds[0]}`, {
      token: flow.token,
    });
    expect(one.body.data.map((s: { ruleId: string }) => s.ruleId)).toEqual([sampleRule.id]);
    const failed = await call(
      base,
      "GET",
      `/api/scores?organizationId=${flow.organizationId}&ruleId=${sampleRule.id}&passed=false`,
      {
        token: flow.token,
      },
    );
    expect(failed.body.data).toEqual([]);

    const summary = await call(
      base,
      "GET",
      `/api/scores/summary?organizationId=${flow.organizationId}&ruleId=${sampleRule.id}&bucket=hour`,
      { token: flow.token },
    );
    expect(summary.status).toBe(200);
    expect(summary.body.bucket).toBe("hour");
    const total = summary.body.buckets.reduce((n: number, b: { count: number }) => n + b.count, 0);
    expect(total).toBe(expected.length);
    for (const b of summary.body.buckets) {
      expect(b).toMatchObject({
        versionId: echoVersionId,
        label: "production",
        passRate: 1,
        meanScore: null,
        judged: 0,
      });
    }
  });

  it("scores with an llm_judge whose calls are stored judge runs carrying their cost", async () => {
    let scores: Record<string, unknown>[] = [];
    await eventually(async () => {
      scores = await everything(
        base,
        `/api/scores?organizationId=${flow.organizationId}&ruleId=${judgeRule.id}`,
        flow.token,
      );
      return scores.length >= judged.length;
    }, 60_000);
    expect(scores.map((s) => (s.target as { runId: string }).runId).sort()).toEqual([...judged].sort());
    for (const s of scores) {
      expect(s).toMatchObject({ passed: true, score: 0.75, label: null, promptId: judgedPromptId });
      const judgeRuns = s.judgeRuns as { runId: string; estimatedCostUsd: number }[];
      expect(judgeRuns).toHaveLength(1);
      expect(judgeRuns[0]?.estimatedCostUsd).toBeGreaterThan(0);
      expect(s.judgeCostUsd).toBeCloseTo(judgeRuns[0]?.estimatedCostUsd ?? 0, 12);
      expect(s.runCostUsd).toBeGreaterThan(0);
      const judgeRun = await call(base, "GET", `/api/judge-runs/${judgeRuns[0]?.runId}`, { token: flow.token });
      expect(judgeRun.status).toBe(200);
      expect(judgeRun.body).toMatchObject({ kind: "judge", estimatedCostUsd: judgeRuns[0]?.estimatedCostUsd });
    }
    const summary = await call(
      base,
      "GET",
      `/api/scores/summary?organizationId=${flow.organizationId}&promptId=${judgedPromptId}`,
      { token: flow.token },
    );
    const buckets = summary.body.buckets as {
      count: number;
      meanScore: number;
      judgeCostUsd: number;
      runCostUsd: number;
    }[];
    expect(buckets.reduce((n, b) => n + b.count, 0)).toBe(judged.length);
    expect(buckets[0]?.meanScore).toBeCloseTo(0.75, 12);
    const judgeCost = scores.reduce((sum, s) => sum + (s.judgeCostUsd as number), 0);
    expect(buckets.reduce((sum, b) => sum + b.judgeCostUsd, 0)).toBeCloseTo(judgeCost, 12);
    expect(buckets.reduce((sum, b) => sum + b.runCostUsd, 0)).toBeGreaterThan(0);
  });

  it("scores the ingested generation spans a traces rule's filter takes", async () => {
    const rule = await createRule({
      name: "GPT-4o answers",
      target: { kind: "traces", filter: { model: "gpt-4o" } },
      sampleRate: 1,
      assertions: [{ type: "contains", value: "Paris" }],
    });
    expect(rule.status).toBe(201);
    const traceId = randomBytes(16).toString("hex");
    const [matching, other] = [randomBytes(8).toString("hex"), randomBytes(8).toString("hex")];
    const text = (key: string, value: string) => ({ key, value: { stringValue: value } });
    const int = (key: string, value: number) => ({ key, value: { intValue: String(value) } });
    const generation = (spanId: string, model: string, answer: string) => ({
      traceId,
      spanId,
      name: `chat ${model}`,
      kind: 3,
      startTimeUnixNano: String(Date.now() * 1e6),
      endTimeUnixNano: String((Date.now() + 250) * 1e6),
      attributes: [
        text("gen_ai.operation.name", "chat"),
        text("gen_ai.provider.name", "openai"),
        text("gen_ai.request.model", model),
        int("gen_ai.usage.input_tokens", 100),
        int("gen_ai.usage.output_tokens", 20),
        text(
          "gen_ai.input.messages",
          JSON.stringify([{ role: "user", parts: [{ type: "text", content: "Capital?" }] }]),
        ),
        text(
          "gen_ai.output.messages",
          JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: answer }] }]),
        ),
      ],
    });
    const ingested = await fetch(`${base}/otel/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": flow.apiKey },
      body: JSON.stringify({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [generation(matching, "gpt-4o", "Paris, of course"), generation(other, "gpt-4o-mini", "Rome")],
              },
            ],
          },
        ],
      }),
    });
    expect(ingested.status).toBe(200);
    let scores: Record<string, unknown>[] = [];
    await eventually(async () => {
      scores = await everything(
        base,
        `/api/scores?organizationId=${flow.organizationId}&ruleId=${rule.body.id}`,
        flow.token,
      );
      return scores.length > 0;
    }, 30_000);
    await new Promise((r) => setTimeout(r, 500));
    scores = await everything(base, `/api/scores?organizationId=${flow.organizationId}&traceId=${traceId}`, flow.token);
    expect(scores).toHaveLength(1);
    expect(scores[0]).toMatchObject({
      ruleId: rule.body.id,
      target: { type: "generation", traceId, spanId: matching },
      passed: true,
      versionId: null,
      assertions: [{ type: "contains", passed: true }],
      runCostUsd: expect.any(Number),
    });
  });

  it("lets no other organization read or change a rule or its scores", async () => {
    for (const method of ["GET", "PATCH", "DELETE"]) {
      const r = await call(base, method, `/api/online-rules/${sampleRule.id}`, {
        token: other.token,
        ...(method === "PATCH" ? { body: { enabled: false } } : {}),
      });
      expect(r.status, method).toBe(404);
      expect(r.body.error.code).toBe("not_found");
    }
    const byKey = await call(base, "GET", `/api/online-rules/${sampleRule.id}`, { apiKey: other.apiKey });
    expect(byKey.status).toBe(404);
    const theirs = await call(base, "GET", `/api/scores?organizationId=${other.organizationId}`, {
      token: other.token,
    });
    expect(theirs.body.data).toEqual([]);
    const rules = await call(base, "GET", `/api/online-rules?organizationId=${other.organizationId}`, {
      token: other.token,
    });
    expect(rules.body.data).toEqual([]);
    const ours = await call(base, "GET", `/api/scores?organizationId=${flow.organizationId}`, { token: other.token });
    expect([403, 404]).toContain(ours.status);
    const still = await call(base, "GET", `/api/online-rules/${sampleRule.id}`, { token: flow.token });
    expect(still.body.enabled).toBe(true);
    // The organization's own key: evaluations:read reads rules and scores; changing them needs evaluations:write.
    const read = await call(base, "GET", `/api/scores?ruleId=${sampleRule.id}&limit=1`, { apiKey: flow.apiKey });
    expect(read.status).toBe(200);
    expect(read.body.data).toHaveLength(1);
    const write = await call(base, "PATCH", `/api/online-rules/${sampleRule.id}`, {
      apiKey: flow.apiKey,
      body: { enabled: false },
    });
    expect(write.status).toBe(403);
    expect((await call(base, "GET", `/api/online-rules/${sampleRule.id}`, { apiKey: flow.apiKey })).body.enabled).toBe(
      true,
    );
  });

  it("refuses a bad rule with 400 naming the field, and stores nothing", async () => {
    const before = await everything(base, `/api/online-rules?organizationId=${flow.organizationId}`, flow.token);
    const good = {
      name: "x",
      target: { kind: "prompt", id: echoPromptId },
      sampleRate: 0.5,
      assertions: [{ type: "contains", value: "a" }],
    };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...good, sampleRate: 0 }, "sampleRate"],
      [{ ...good, sampleRate: 1.5 }, "sampleRate"],
      [{ ...good, target: { kind: "workflow", id: echoPromptId } }, "kind"],
      [{ ...good, target: { kind: "skill", id: echoPromptId } }, "target.id"],
      [{ ...good, assertions: [] }, "assertions"],
      [{ ...good, assertions: [{ type: "regex", pattern: "(a)\\1" }] }, "assertions[0].pattern"],
    ];
    for (const [body, field] of cases) {
      const r = await createRule(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe("invalid_argument");
      expect(JSON.stringify(r.body.error)).toContain(field);
    }
    const patch = await call(base, "PATCH", `/api/online-rules/${sampleRule.id}`, {
      token: flow.token,
      body: { sampleRate: 0 },
    });
    expect(patch.status).toBe(400);
    const after = await everything(base, `/api/online-rules?organizationId=${flow.organizationId}`, flow.token);
    expect(after).toEqual(before);
  });

  it("replays a create sent again with the same Idempotency-Key", async () => {
    const body = {
      organizationId: flow.organizationId,
      name: "Once",
      target: { kind: "agent", id: `agt_${"0".repeat(32)}` },
      sampleRate: 0.5,
      assertions: [{ type: "max_cost_usd", value: 1 }],
    };
    const headers = { "idempotency-key": `once-${randomBytes(4).toString("hex")}` };
    const first = await call(base, "POST", "/api/online-rules", { token: flow.token, body, headers });
    const again = await call(base, "POST", "/api/online-rules", { token: flow.token, body, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.id).toBe(first.body.id);
    expect((await call(base, "DELETE", `/api/online-rules/${first.body.id}`, { token: flow.token })).status).toBe(200);
  });

  it("changes and deletes a rule", async () => {
    const r = await createRule({
      name: "Temporary",
      target: { kind: "traces", filter: { model: "gpt-4o" } },
      sampleRate: 0.1,
      assertions: [{ type: "max_latency_ms", value: 1000 }],
    });
    expect(r.status).toBe(201);
    expect(r.body.target).toEqual({ kind: "traces", filter: { model: "gpt-4o" } });
    const patched = await call(base, "PATCH", `/api/online-rules/${r.body.id}`, {
      token: flow.token,
      body: { enabled: false, sampleRate: 0.2, name: "Renamed" },
    });
    expect(patched.body).toMatchObject({ enabled: false, sampleRate: 0.2, name: "Renamed" });
    const deleted = await call(base, "DELETE", `/api/online-rules/${r.body.id}`, { token: flow.token });
    expect(deleted.body.id).toBe(r.body.id);
    expect((await call(base, "GET", `/api/online-rules/${r.body.id}`, { token: flow.token })).status).toBe(404);
  });
});
