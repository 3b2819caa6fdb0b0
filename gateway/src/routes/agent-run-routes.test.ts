import { createLogger } from "@kiln/kit/logger";
import { type AgentFixture, createPublishedAgent } from "@kiln/testing/agent-fixture";
import { buildTestPlatform } from "@kiln/testing/platform";
import { createTestClient, type ErrorBody, type TestClient, type TestResponse } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The agent runtime routes (api.md "Agent runs", "Stability": stable, compare beta) through the embedded
 * platform: the stable response shapes pinned field by field, refused input, other organizations
 * and scopes on every route.
 */

// biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field.
type Loose = any;

type Embedded = Awaited<ReturnType<typeof buildTestPlatform>>;

let kiln: Embedded;
let api: TestClient;

interface Member {
  token: string;
  organizationId: string;
}

let owner: Member;
let stranger: Member;
let strangerKey: string;
let readOnlyKey: string;
let agent: AgentFixture;
let firstRun: Loose;

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
const INPUTS = { topic: "tea", city: "Paris" };

async function newMember(): Promise<Member> {
  const user = await api.signUp();
  const onboarding = await api.onboard(user.accessToken);
  return { token: user.accessToken, organizationId: onboarding.organization.id };
}

beforeAll(async () => {
  kiln = await buildTestPlatform({ logger: createLogger({ name: "test", level: "silent" }) });
  api = createTestClient(kiln.gateway.app);
  owner = await newMember();
  stranger = await newMember();
  strangerKey = (await api.createApiKey(stranger.token, stranger.organizationId, ["runs:read", "runs:write"])).key;
  readOnlyKey = (await api.createApiKey(owner.token, owner.organizationId, ["runs:read"])).key;
  agent = await createPublishedAgent(api, owner.token, owner.organizationId);
  const res = await runAgent({ organizationId: owner.organizationId, inputs: INPUTS });
  expect(res.status, res.text).toBe(201);
  firstRun = res.body;
}, 60_000);

afterAll(async () => {
  await kiln?.close();
});

const runAgent = (body: unknown, options: { token?: string; apiKey?: string; agentId?: string } = {}) =>
  api.post<Loose>(`/api/agents/${options.agentId ?? agent.agentId}/run`, body, {
    ...(options.apiKey ? { apiKey: options.apiKey } : { token: options.token ?? owner.token }),
  });

function expectError(res: TestResponse, status: number, code: string, field?: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toEqual({
    error: { code, message: expect.any(String), details: expect.any(Array), requestId: res.headers["x-request-id"] },
  });
  if (field !== undefined) expect((res.body as ErrorBody).error.details.map((d) => d.field)).toContain(field);
}

const USAGE = { inputTokens: expect.any(Number), outputTokens: expect.any(Number) };

/** Every field of the stable agent run shape, with its type. */
function expectAgentRunShape(run: Loose) {
  const keys = Object.keys(run).sort();
  const required = [
    "agentId",
    "agentVersionId",
    "completedAt",
    "createdAt",
    "estimatedCostUsd",
    "id",
    "input",
    "kind",
    "latencyMs",
    "model",
    "organizationId",
    "output",
    "provider",
    "status",
    "steps",
    "toolCallCount",
    "toolCallCounts",
    "toolCalls",
    "usage",
  ];
  expect(keys.filter((k) => !["error", "parentRunId", "rerunFromStepId"].includes(k))).toEqual(required);
  expect(run).toEqual({
    id: expect.stringMatching(/^arun_[0-9a-f]{32}$/),
    kind: "agent",
    organizationId: expect.any(String),
    status: expect.stringMatching(/^(succeeded|failed|running)$/),
    input: { inputs: expect.any(Object) },
    output: run.output === null ? null : expect.objectContaining({ text: expect.any(String) }),
    provider: run.provider === null ? null : expect.any(String),
    model: run.model === null ? null : expect.any(String),
    usage: USAGE,
    estimatedCostUsd: run.estimatedCostUsd === null ? null : expect.any(Number),
    latencyMs: expect.any(Number),
    toolCallCount: expect.any(Number),
    toolCallCounts: expect.any(Object),
    toolCalls: expect.any(Array),
    ...(run.error ? { error: { code: expect.any(String), message: expect.any(String) } } : {}),
    createdAt: ISO,
    completedAt: run.status === "running" ? null : ISO,
    agentId: expect.stringMatching(/^agt_/),
    agentVersionId: expect.stringMatching(/^av_/),
    steps: expect.any(Array),
    ...(run.parentRunId ? { parentRunId: expect.stringMatching(/^arun_/), rerunFromStepId: expect.any(String) } : {}),
  });
  for (const step of run.steps) {
    expect(step).toEqual({
      stepId: expect.any(String),
      type: expect.stringMatching(/^(prompt|skill|tool)$/),
      status: expect.stringMatching(/^(succeeded|failed)$/),
      input: expect.any(Object),
      output: step.output === null ? null : expect.objectContaining({ text: expect.any(String) }),
      ...(step.runId !== undefined ? { runId: expect.stringMatching(/^(run|srun)_/) } : {}),
      provider: step.provider === null ? null : expect.any(String),
      model: step.model === null ? null : expect.any(String),
      usage: USAGE,
      estimatedCostUsd: step.estimatedCostUsd === null ? null : expect.any(Number),
      latencyMs: expect.any(Number),
      toolCalls: expect.any(Array),
      ...(step.error ? { error: { code: expect.any(String), message: expect.any(String) } } : {}),
      reused: expect.any(Boolean),
    });
  }
}

describe("POST /api/agents/:id/run", () => {
  it("answers 201 with the stable agent run shape", async () => {
    expectAgentRunShape(firstRun);
    expect(firstRun).toMatchObject({
      organizationId: owner.organizationId,
      status: "succeeded",
      input: { inputs: INPUTS },
      agentId: agent.agentId,
      toolCallCount: 1,
      toolCallCounts: { [agent.toolKey]: 1 },
      // The tool step has no provider, so the steps disagree.
      provider: null,
      model: null,
    });
    expect(firstRun.steps.map((s: Loose) => [s.stepId, s.type, s.status, s.reused])).toEqual([
      ["draft", "prompt", "succeeded", false],
      ["weather", "tool", "succeeded", false],
      ["polish", "prompt", "succeeded", false],
    ]);
    expect(firstRun.steps[0].runId).toMatch(/^run_/);
    expect(firstRun.steps[1].output).toEqual({
      text: '{"sky":"clear","temperatureC":21}',
      json: { sky: "clear", temperatureC: 21 },
    });
    expect(firstRun.output.text).toContain("Polish this: Draft a note about tea. (sky: clear)");
  });

  it("is stable, and the child prompt runs are stored", async () => {
    const res = await runAgent({ organizationId: owner.organizationId, inputs: { ...INPUTS, skipWeather: true } });
    expect(res.status).toBe(201);
    expect(res.headers["x-api-stability"]).toBe("stable");
    expect(res.body.steps.map((s: Loose) => s.stepId)).toEqual(["draft", "polish"]);
    expect(res.body).toMatchObject({ provider: "local", model: "local/echo", estimatedCostUsd: 0 });
  });

  it("async: 202 with a running run, then the finished run on GET", async () => {
    const res = await runAgent({ organizationId: owner.organizationId, inputs: INPUTS, mode: "async" });
    expect(res.status, res.text).toBe(202);
    expectAgentRunShape(res.body);
    expect(res.body).toMatchObject({ status: "running", steps: [], output: null, completedAt: null });
    let polled: Loose;
    for (let i = 0; i < 100; i++) {
      polled = (await api.get<Loose>(`/api/agent-runs/${res.body.id}`, { token: owner.token })).body;
      if (polled.status !== "running") break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expectAgentRunShape(polled);
    expect(polled).toMatchObject({ id: res.body.id, status: "succeeded", completedAt: ISO });
    expect(polled.steps).toHaveLength(3);
  });

  it("refuses bad input", async () => {
    const org = owner.organizationId;
    expectError(await runAgent({ organizationId: org }), 400, "invalid_argument", "inputs");
    expectError(await runAgent({ organizationId: org, inputs: [] }), 400, "invalid_argument");
    expectError(await runAgent({ organizationId: org, inputs: INPUTS, extra: 1 }), 400, "invalid_argument");
    expectError(await runAgent({ organizationId: org, inputs: INPUTS, mode: "later" }), 400, "invalid_argument");
    expectError(
      await runAgent({ organizationId: org, inputs: { topic: "tea" } }),
      400,
      "invalid_argument",
      "inputs.city",
    );
    expectError(await runAgent({ inputs: INPUTS }), 400, "invalid_argument", "organizationId");
    expectError(
      await runAgent({ organizationId: org, inputs: INPUTS }, { agentId: "agt_00000000000000000000000000000000" }),
      404,
      "not_found",
    );
    const raw = await api.request("POST", `/api/agents/${agent.agentId}/run`, {
      token: owner.token,
      rawBody: "{",
      headers: { "content-type": "application/json" },
    });
    expectError(raw, 400, "invalid_argument");
  });

  it("hides other organizations' agents and checks scopes", async () => {
    expectError(
      await runAgent({ organizationId: stranger.organizationId, inputs: INPUTS }, { token: stranger.token }),
      404,
      "not_found",
    );
    expectError(
      await runAgent({ organizationId: owner.organizationId, inputs: INPUTS }, { token: stranger.token }),
      404,
      "not_found",
    );
    expectError(await runAgent({ inputs: INPUTS }, { apiKey: strangerKey }), 404, "not_found");
    expectError(await runAgent({ inputs: INPUTS }, { apiKey: readOnlyKey }), 403, "permission_denied");
    expectError(await api.post(`/api/agents/${agent.agentId}/run`, { inputs: INPUTS }), 401, "unauthenticated");
  });
});

describe("GET /api/agent-runs/:id", () => {
  it("reads a run back with the same shape and is stable", async () => {
    const res = await api.get<Loose>(`/api/agent-runs/${firstRun.id}`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.headers["x-api-stability"]).toBe("stable");
    expect(res.body).toEqual(firstRun);
    const byKey = await api.get<Loose>(`/api/agent-runs/${firstRun.id}`, { apiKey: readOnlyKey });
    expect(byKey.status).toBe(200);
  });

  it("is 404 for other organizations, unknown ids and runs of other kinds", async () => {
    expectError(await api.get(`/api/agent-runs/${firstRun.id}`, { token: stranger.token }), 404, "not_found");
    expectError(await api.get(`/api/agent-runs/${firstRun.id}`, { apiKey: strangerKey }), 404, "not_found");
    expectError(
      await api.get("/api/agent-runs/arun_00000000000000000000000000000000", { token: owner.token }),
      404,
      "not_found",
    );
    expectError(await api.get(`/api/agent-runs/${firstRun.steps[0].runId}`, { token: owner.token }), 404, "not_found");
  });
});

describe("POST /api/agent-runs/:id/rerun-from-step", () => {
  it("answers 201 with a new run that reuses the earlier steps", async () => {
    const res = await api.post<Loose>(
      `/api/agent-runs/${firstRun.id}/rerun-from-step`,
      { stepId: "polish" },
      { token: owner.token },
    );
    expect(res.status, res.text).toBe(201);
    expect(res.headers["x-api-stability"]).toBe("stable");
    expectAgentRunShape(res.body);
    expect(res.body).toMatchObject({ parentRunId: firstRun.id, rerunFromStepId: "polish", output: firstRun.output });
    expect(res.body.steps.map((s: Loose) => [s.stepId, s.reused])).toEqual([
      ["draft", true],
      ["weather", true],
      ["polish", false],
    ]);
    expect(res.body.toolCallCount).toBe(0);
  });

  it("refuses bad input, unknown steps, other organizations and read-only keys", async () => {
    const url = `/api/agent-runs/${firstRun.id}/rerun-from-step`;
    expectError(await api.post(url, {}, { token: owner.token }), 400, "invalid_argument", "stepId");
    expectError(await api.post(url, { stepId: "polish", extra: 1 }, { token: owner.token }), 400, "invalid_argument");
    expectError(
      await api.post(url, { stepId: "polish", inputs: "x" }, { token: owner.token }),
      400,
      "invalid_argument",
    );
    expectError(await api.post(url, { stepId: "nope" }, { token: owner.token }), 400, "invalid_argument", "stepId");
    expectError(
      await api.post(url, { stepId: "polish", inputs: { topic: "" } }, { token: owner.token }),
      400,
      "invalid_argument",
    );
    expectError(await api.post(url, { stepId: "polish" }, { token: stranger.token }), 404, "not_found");
    expectError(await api.post(url, { stepId: "polish" }, { apiKey: strangerKey }), 404, "not_found");
    expectError(await api.post(url, { stepId: "polish" }, { apiKey: readOnlyKey }), 403, "permission_denied");
    expectError(
      await api.post(
        "/api/agent-runs/arun_00000000000000000000000000000000/rerun-from-step",
        { stepId: "polish" },
        { token: owner.token },
      ),
      404,
      "not_found",
    );
  });
});

describe("POST /api/agent-runs/:id/load-inputs", () => {
  it("answers the stable load-inputs shape", async () => {
    const res = await api.post<Loose>(`/api/agent-runs/${firstRun.id}/load-inputs`, {}, { token: owner.token });
    expect(res.status, res.text).toBe(200);
    expect(res.headers["x-api-stability"]).toBe("stable");
    expect(res.body).toEqual({
      agentId: agent.agentId,
      agentVersionId: firstRun.agentVersionId,
      inputs: INPUTS,
      validation: { valid: true, errors: [] },
    });
  });

  it("refuses bad input and other organizations", async () => {
    const url = `/api/agent-runs/${firstRun.id}/load-inputs`;
    expectError(await api.post(url, { versionId: 3 }, { token: owner.token }), 400, "invalid_argument");
    expectError(await api.post(url, { other: 1 }, { token: owner.token }), 400, "invalid_argument");
    expectError(
      await api.post(url, { versionId: "av_00000000000000000000000000000000" }, { token: owner.token }),
      404,
      "not_found",
    );
    expectError(await api.post(url, {}, { token: stranger.token }), 404, "not_found");
    expectError(await api.post(url, {}, { apiKey: strangerKey }), 404, "not_found");
    expectError(await api.post(url, {}, { apiKey: readOnlyKey }), 403, "permission_denied");
  });
});

describe("GET /api/agent-runs/compare", () => {
  it("compares runs step by step (beta)", async () => {
    const other = await runAgent({ organizationId: owner.organizationId, inputs: { ...INPUTS, topic: "coffee" } });
    const res = await api.get<Loose>("/api/agent-runs/compare", {
      token: owner.token,
      query: { runIds: `${firstRun.id},${other.body.id}` },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.headers["x-api-stability"]).toBe("beta");
    expect(res.body.runs).toEqual([
      {
        id: firstRun.id,
        agentId: agent.agentId,
        agentVersionId: firstRun.agentVersionId,
        status: "succeeded",
        createdAt: ISO,
      },
      expect.objectContaining({ id: other.body.id }),
    ]);
    expect(res.body.steps.map((s: Loose) => [s.stepId, s.outputsEqual])).toEqual([
      ["draft", false],
      ["weather", true],
      ["polish", false],
    ]);
    expect(res.body.steps[0].byRun[firstRun.id]).toEqual({
      status: "succeeded",
      output: firstRun.steps[0].output,
      usage: firstRun.steps[0].usage,
      latencyMs: expect.any(Number),
    });
    expect(res.body.totals[firstRun.id]).toEqual({
      usage: firstRun.usage,
      estimatedCostUsd: firstRun.estimatedCostUsd,
      latencyMs: firstRun.latencyMs,
    });
  });

  it("refuses bad id lists, unknown runs and other organizations", async () => {
    const compare = (
      runIds: string | undefined,
      options: { token?: string; apiKey?: string } = { token: owner.token },
    ) => api.get("/api/agent-runs/compare", { ...options, query: { runIds } });
    expectError(await compare(undefined), 400, "invalid_argument");
    expectError(await compare(firstRun.id), 400, "invalid_argument", "runIds");
    expectError(await compare(Array(11).fill(firstRun.id).join(",")), 400, "invalid_argument", "runIds");
    expectError(await compare(`${firstRun.id},${firstRun.id}`), 400, "invalid_argument", "runIds");
    expectError(await compare(`${firstRun.id},arun_00000000000000000000000000000000`), 404, "not_found");
    expectError(await compare(`${firstRun.id},${firstRun.id.replace(/.$/, "0")}x`), 404, "not_found");
    const strangerAgent = await createPublishedAgent(api, stranger.token, stranger.organizationId);
    const strangerRun = await runAgent(
      { organizationId: stranger.organizationId, inputs: INPUTS },
      { token: stranger.token, agentId: strangerAgent.agentId },
    );
    expect(strangerRun.status).toBe(201);
    expectError(await compare(`${firstRun.id},${strangerRun.body.id}`), 404, "not_found");
    expectError(await compare(`${firstRun.id},${strangerRun.body.id}`, { apiKey: strangerKey }), 404, "not_found");
  });
});
