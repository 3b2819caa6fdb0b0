import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_MODES, type RunningKiln } from "./support/run-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field.
type Loose = any;

const VARIABLES = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };

describe.each(RUN_MODES)("prompt evaluations in $name", (mode) => {
  let running: RunningKiln;
  let api: TestClient;
  let owner: string;
  let organizationId: string;
  let outsider: string;
  let outsiderOrg: string;
  let promptId: string;
  let v1: string;
  let v2: string;
  let datasetId: string;
  let itemIds: string[];

  const start = (body: Record<string, unknown>, token = owner, id = promptId) =>
    api.post<Loose>(`/api/prompts/${id}/evaluations/run`, body, { token });
  const read = (evaluationRunId: string, token = owner, id = promptId) =>
    api.get<Loose>(`/api/prompts/${id}/evaluations/${evaluationRunId}`, { token });
  const finished = async (evaluationRunId: string): Promise<Loose> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await read(evaluationRunId);
      expect(r.status, r.text).toBe(200);
      if (["completed", "failed", "cancelled"].includes(r.body.status)) return r.body;
      if (Date.now() > deadline) throw new Error(`prompt evaluation still ${r.body.status}`);
      await new Promise((done) => setTimeout(done, 100));
    }
  };
  const startAndFinish = async (body: Record<string, unknown>) => {
    const r = await start(body);
    expect(r.status, r.text).toBe(202);
    expect(r.body).toEqual({ id: r.body.id, evaluationRunId: r.body.id, status: "queued" });
    return finished(r.body.id);
  };
  const expectRefused = (r: Loose, status: number, code: string, field?: string) => {
    expect(r.status, r.text).toBe(status);
    expect(r.body.error).toMatchObject({ code, message: expect.any(String) });
    if (field) expect(r.body.error.details.map((d: Loose) => d.field)).toContain(field);
  };
  const setLabel = async (label: string, versionId: string) => {
    const r = await api.put<Loose>(`/api/prompts/${promptId}/labels/${label}`, { versionId }, { token: owner });
    expect(r.status, r.text).toBe(200);
  };
  const contains = (value: string) => [{ type: "contains", value }];

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    owner = (await api.signUp()).accessToken;
    organizationId = (await api.onboard(owner)).organization.id;
    outsider = (await api.signUp()).accessToken;
    outsiderOrg = (await api.onboard(outsider)).organization.id;
    const published = await api.createPublishedPrompt(owner, organizationId, {
      systemPrompt: "Hello {{name}}",
      variablesSchema: VARIABLES,
      model: "local/echo",
    });
    promptId = published.prompt.id;
    v1 = published.version.id;
    v2 = (
      await api.createPromptVersion(owner, promptId, {
        systemPrompt: "Goodbye {{name}}",
        variablesSchema: VARIABLES,
        model: "local/echo",
      })
    ).id;
    // A second model: a route of the organization onto the same local model.
    const route = await api.post<Loose>(
      "/api/model-routes",
      { organizationId, name: "echo-b", strategy: "fallback", targets: [{ model: "local/echo" }] },
      { token: owner },
    );
    expect(route.status, route.text).toBe(201);
    const d = await api.post<Loose>("/api/datasets", { organizationId, name: "Greetings" }, { token: owner });
    expect(d.status, d.text).toBe(201);
    datasetId = d.body.id;
    const added = await api.post<Loose>(
      `/api/datasets/${datasetId}/items`,
      { items: [{ input: { name: "Ada" }, expectedOutput: "Hello Ada" }, { input: { name: "Grace" } }] },
      { token: owner },
    );
    expect(added.status, added.text).toBe(201);
    itemIds = added.body.data.map((i: Loose) => i.id);
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  it("runs every item on each version × model, each attempt a stored run, judged by the assertions", async () => {
    const models = ["local/echo", "route/echo-b"];
    const run = await startAndFinish({
      organizationId,
      datasetId,
      versionIds: [v1, v2],
      models,
      assertions: contains("Hello"),
      repeats: 2,
    });
    const keys = ["v1@local/echo", "v1@route/echo-b", "v2@local/echo", "v2@route/echo-b"];
    expect(run).toMatchObject({ status: "completed", promptId, datasetId, datasetVersion: 1, repeats: 2 });
    expect(run.assertions).toEqual(contains("Hello"));
    expect(run.targets).toEqual([
      { key: keys[0], promptVersionId: v1, version: 1, label: null, model: models[0] },
      { key: keys[1], promptVersionId: v1, version: 1, label: null, model: models[1] },
      { key: keys[2], promptVersionId: v2, version: 2, label: null, model: models[0] },
      { key: keys[3], promptVersionId: v2, version: 2, label: null, model: models[1] },
    ]);
    expect(run.results.map((r: Loose) => r.itemId)).toEqual(itemIds);
    for (const result of run.results) {
      expect(Object.keys(result.byTarget).sort()).toEqual([...keys].sort());
      for (const key of keys) {
        const t = result.byTarget[key];
        expect(t.outcome).toBe(key.startsWith("v1") ? "pass" : "fail");
        expect(t.passRate).toBe(key.startsWith("v1") ? 1 : 0);
        expect(t.attempts).toHaveLength(2);
        // Two attempts are two runs: the model answered each (no response cache).
        expect(new Set(t.attempts.map((a: Loose) => a.runId)).size).toBe(2);
      }
    }
    const first = run.results[0].byTarget["v2@route/echo-b"];
    expect(first.output.text).toContain("Goodbye Ada");
    const stored = await api.get<Loose>(`/api/runs/${first.runId}`, { token: owner });
    expect(stored.status, stored.text).toBe(200);
    expect(stored.body).toMatchObject({
      kind: "prompt",
      promptId,
      promptVersionId: v2,
      evaluationRunId: run.id,
      status: "succeeded",
    });
    for (const key of keys) {
      const s = run.summary.byTarget[key];
      expect(s).toMatchObject({ attempts: 4, passed: key.startsWith("v1") ? 2 : 0 });
      expect(s.passRate).toBe(key.startsWith("v1") ? 1 : 0);
      expect(s.latencyMs).toEqual({ p50: expect.any(Number), p95: expect.any(Number), p99: expect.any(Number) });
      expect(s.usage.inputTokens).toBeGreaterThan(0);
    }
    expect(run.summary.text).toMatch(/^2 items × 2 attempts: v1@local\/echo 2\/2 passed, /);
  });

  it("resolves labels when it starts, and compares two runs item by item", async () => {
    await setLabel("candidate", v1);
    const base = await startAndFinish({
      organizationId,
      datasetId,
      labels: ["candidate"],
      assertions: contains("Hello"),
    });
    expect(base.targets).toEqual([
      { key: "candidate", promptVersionId: v1, version: 1, label: "candidate", model: null },
    ]);
    await setLabel("candidate", v2);
    const head = await startAndFinish({
      organizationId,
      datasetId,
      labels: ["candidate"],
      assertions: contains("Hello"),
    });
    expect(head.targets[0]).toMatchObject({ promptVersionId: v2, version: 2 });
    expect(head.results.map((r: Loose) => r.byTarget.candidate.outcome)).toEqual(["fail", "fail"]);

    const compared = await api.get<Loose>(`/api/prompts/${promptId}/evaluations/compare`, {
      token: owner,
      query: { base: base.id, head: head.id },
    });
    expect(compared.status, compared.text).toBe(200);
    expect(compared.body.base).toEqual({
      evaluationRunId: base.id,
      target: "candidate",
      promptVersionId: v1,
      repeats: 1,
    });
    expect(compared.body.head).toMatchObject({ evaluationRunId: head.id, promptVersionId: v2 });
    expect(compared.body.results.map((r: Loose) => [r.itemId, r.change])).toEqual(
      itemIds.map((id) => [id, "regressed"]),
    );
    expect(compared.body.summary.changes.regressed).toBe(2);
    const other = await api.get<Loose>(`/api/prompts/${promptId}/evaluations/compare`, {
      token: owner,
      query: { base: base.id, head: head.id, target: "v1@local/echo" },
    });
    expectRefused(other, 409, "failed_precondition", "target");

    const listed = await api.get<Loose>(`/api/prompts/${promptId}/evaluations`, { token: owner, query: { limit: 2 } });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.map((r: Loose) => r.id)).toEqual([head.id, base.id]);
    expect(listed.body.data[0].results).toBeUndefined();
    expect(listed.body.data[0].summary.text).toContain("candidate 0/2 passed");
  });

  it("runs the published version by default, and an API key with the evaluation scopes alone may start one", async () => {
    const key = (await api.createApiKey(owner, organizationId, ["evaluations:read", "evaluations:write"])).key;
    const r = await start({ datasetId, assertions: [{ type: "max_latency_ms", value: 60_000 }] }, key);
    expect(r.status, r.text).toBe(202);
    const run = await finished(r.body.id);
    expect(run.targets).toEqual([{ key: "v1", promptVersionId: v1, version: 1, label: null, model: null }]);
    expect(run.summary.byTarget.v1.passed).toBe(2);
  });

  it("cancels a run: what did not start never runs, and the report says so", async () => {
    const items = Array.from({ length: 60 }, (_, i) => ({ input: { name: `n${i}` } }));
    const big = await api.post<Loose>("/api/datasets", { organizationId, name: "Many" }, { token: owner });
    await api.post(`/api/datasets/${big.body.id}/items`, { items }, { token: owner });
    const r = await start({ organizationId, datasetId: big.body.id, assertions: contains("Hello"), repeats: 20 });
    expect(r.status, r.text).toBe(202);
    const cancelled = await api.post<Loose>(
      `/api/prompts/${promptId}/evaluations/${r.body.id}/cancel`,
      {},
      { token: owner },
    );
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.status).toBe("cancelled");
    const run = await finished(r.body.id);
    expect(run.summary.text).toMatch(/^Cancelled: /);
    expect(run.summary.byTarget.v1.attempts).toBeLessThan(60 * 20);
  });

  it("refuses bad starts with the field named, and starts nothing", async () => {
    const before = (await api.get<Loose>(`/api/prompts/${promptId}/evaluations`, { token: owner })).body.data.length;
    const ok = { organizationId, datasetId, assertions: contains("Hello") };
    expectRefused(await start({ organizationId, assertions: contains("x") }), 400, "invalid_argument", "datasetId");
    expectRefused(await start({ ...ok, assertions: [] }), 400, "invalid_argument", "assertions");
    expectRefused(await start({ ...ok, versionIds: [v1], labels: ["production"] }), 400, "invalid_argument", "labels");
    expectRefused(
      await start({ ...ok, versionIds: ["pv_00000000000000000000000000000000"] }),
      400,
      "invalid_argument",
      "versionIds[0]",
    );
    expectRefused(await start({ ...ok, models: ["echo"] }), 400, "invalid_argument", "models[0]");
    expectRefused(await start({ ...ok, labels: ["nowhere"] }), 409, "failed_precondition", "labels[0]");
    expectRefused(await start({ ...ok, repeats: 21 }), 400, "invalid_argument", "repeats");
    expectRefused(await start({ ...ok, datasetVersion: 9 }), 400, "invalid_argument", "datasetVersion");
    expectRefused(
      await start({ ...ok, assertions: [{ type: "regex", pattern: "(" }] }),
      400,
      "invalid_argument",
      "assertions[0].pattern",
    );
    const theirs = await api.post<Loose>(
      "/api/datasets",
      { organizationId: outsiderOrg, name: "T" },
      { token: outsider },
    );
    expectRefused(await start({ ...ok, datasetId: theirs.body.id }), 400, "invalid_argument", "datasetId");
    const after = (await api.get<Loose>(`/api/prompts/${promptId}/evaluations`, { token: owner })).body.data.length;
    expect(after).toBe(before);
  });

  it("shows another organization's prompt and runs as missing, and keeps skills' and prompts' runs apart", async () => {
    const r = await start({ organizationId, datasetId, assertions: contains("Hello") });
    expect(r.status, r.text).toBe(202);
    const foreign = { organizationId: outsiderOrg, datasetId, assertions: contains("x") };
    expectRefused(await start(foreign, outsider), 404, "not_found");
    // A user names the organization (an API key may omit it).
    expectRefused(await start({ datasetId, assertions: contains("x") }), 400, "invalid_argument", "organizationId");
    expectRefused(await read(r.body.id, outsider), 404, "not_found");
    const skill = await api.createSkill(owner, organizationId, { name: "Apart" });
    expectRefused(
      await api.get<Loose>(`/api/skills/${skill.id}/evaluations/${r.body.id}`, { token: owner }),
      404,
      "not_found",
    );
    const skills = await api.get<Loose>(`/api/skills/${skill.id}/evaluations`, { token: owner });
    expect(skills.body.data).toEqual([]);
    await finished(r.body.id);
  });
});
