/**
 * The usage ledger and the plan's monthly run limit (docs/usage.md) over real HTTP: in both modes,
 * 50 concurrent runs of a priced model add up in GET /api/usage to the sum of the stored runs (runs,
 * every token class, cost to the cent), grouped every way, as CSV, and only for their own
 * organization; in the embedded mode, a plan's limit lets its last run through and refuses the
 * next with 429 and Retry-After before any provider call.
 */
import { createClient } from "@connectrpc/connect";
import { loadProvidersConfig } from "@kiln/execution/config";
import { createInternalTokens } from "@kiln/kit/auth";
import { createForwardInterceptor } from "@kiln/kit/rpc/auth-interceptor";
import { createDirectTransport } from "@kiln/kit/rpc/transport";
import { IdentityService } from "@kiln/proto/identity";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbedded } from "./support/embedded.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { PROVIDER_MODES, type RunningKiln } from "./support/provider-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: bodies are asserted field by field.
type Loose = any;

const USAGE = {
  prompt_tokens: 1200,
  completion_tokens: 150,
  prompt_tokens_details: { cached_tokens: 1000 },
  completion_tokens_details: { reasoning_tokens: 40 },
};

const providerEnv = (stub: OpenAIStub) => ({
  OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
    {
      id: "stub",
      baseUrl: stub.baseUrl,
      models: [{ model: "priced", inputPerMTokUsd: 3, outputPerMTokUsd: 15, cachedInputPerMTokUsd: 0.3 }],
    },
  ]),
  PROVIDER_MAX_RETRIES: "0",
});

const startStub = () => startOpenAIStub({ respond: () => stubReply.text("ok", { usage: USAGE }) });

const SCOPES = ["prompts:read", "runs:write", "runs:read"];
const today = () => new Date().toISOString().slice(0, 10);

async function usageOf(base: string, flow: FlowResult, groupBy: string, extra = "") {
  const res = await call(
    base,
    "GET",
    `/api/usage?organizationId=${flow.organizationId}&from=${today()}&to=${today()}&groupBy=${groupBy}${extra}`,
    { token: flow.token },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Loose;
}

/** Polls until the ledger counted `runs` runs (it is written off the request path). */
async function counted(base: string, flow: FlowResult, runs: number) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const body = await usageOf(base, flow, "day");
    if (body.totals.runs >= runs || Date.now() > deadline) return body;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function storedRuns(base: string, flow: FlowResult): Promise<Loose[]> {
  const res = await call(base, "GET", `/api/runs?organizationId=${flow.organizationId}&limit=100`, {
    token: flow.token,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

describe.each(PROVIDER_MODES)("the usage ledger ($name)", (mode) => {
  let stub: OpenAIStub;
  let kiln: RunningKiln;
  let flow: FlowResult;
  let other: FlowResult;
  let promptId: string;

  beforeAll(async () => {
    stub = await startStub();
    kiln = await mode.start(providerEnv(stub));
    flow = await runIdentityFlow(kiln.base, SCOPES);
    other = await runIdentityFlow(kiln.base, SCOPES);
    const client = createTestClient(kiln.base);
    const p = await client.createPublishedPrompt(flow.token, flow.organizationId, {
      model: "stub/priced",
      systemPrompt: "Answer.",
    });
    promptId = p.prompt.id;
  }, 180_000);

  afterAll(async () => {
    await kiln?.stop();
    await stub?.close();
  });

  it("adds 50 concurrent runs up to the sum of the stored runs, every class and the cost to the cent", async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(kiln.base, "POST", `/api/prompts/${promptId}/run`, {
          // Half with the API key, half as the user: both count, the key's under its id.
          ...(i % 2 === 0 ? { apiKey: flow.apiKey } : { token: flow.token }),
          body: { organizationId: flow.organizationId, variables: {} },
        }),
      ),
    );
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(201);
    const body = await counted(kiln.base, flow, 50);
    const runs = await storedRuns(kiln.base, flow);
    expect(runs).toHaveLength(50);
    const sum = (f: (r: Loose) => number) => runs.reduce((a, r) => a + f(r), 0);
    expect(body.totals).toMatchObject({
      runs: 50,
      inputTokens: sum((r) => r.usage.inputTokens),
      cachedInputTokens: sum((r) => r.usage.cachedInputTokens ?? 0),
      outputTokens: sum((r) => r.usage.outputTokens),
      reasoningTokens: sum((r) => r.usage.reasoningTokens ?? 0),
    });
    expect(body.totals.inputTokens).toBe(50 * 1200);
    expect(Math.round(body.totals.costUsd * 100)).toBe(Math.round(sum((r) => r.estimatedCostUsd) * 100));
    expect(body.totals.costUsd).toBeCloseTo(
      sum((r) => r.estimatedCostUsd),
      9,
    );
    expect(body.data).toEqual([{ day: today(), ...body.totals }]);
    // Nothing more arrives later (each run counted once).
    await new Promise((r) => setTimeout(r, 500));
    expect((await usageOf(kiln.base, flow, "day")).totals.runs).toBe(50);
  }, 120_000);

  it("groups by model, API key, prompt and connection, each row's key fields named", async () => {
    const byModel = await usageOf(kiln.base, flow, "model");
    expect(byModel.data).toEqual([expect.objectContaining({ model: "stub/priced", provider: "stub", runs: 50 })]);
    const byKey = await usageOf(kiln.base, flow, "apiKey");
    expect(byKey.data.map((r: Loose) => [r.apiKeyId, r.runs])).toEqual([
      ["", 25],
      [flow.apiKeyId, 25],
    ]);
    const byPrompt = await usageOf(kiln.base, flow, "prompt");
    expect(byPrompt.data).toEqual([expect.objectContaining({ promptId, runs: 50 })]);
    expect(byPrompt.data[0].promptVersionId).toMatch(/^pv/);
    const byConnection = await usageOf(kiln.base, flow, "connection");
    // A deployment provider's model: no connection of the organization's own.
    expect(byConnection.data).toEqual([expect.objectContaining({ connectionId: "", provider: "stub", runs: 50 })]);
    for (const g of [byModel, byKey, byPrompt, byConnection]) expect(g.totals).toEqual(byModel.totals);
  });

  it("answers CSV for format=csv and for Accept: text/csv", async () => {
    const url = `/api/usage?organizationId=${flow.organizationId}&from=${today()}&to=${today()}&groupBy=apiKey`;
    for (const [path, headers] of [
      [`${url}&format=csv`, {}],
      [url, { accept: "text/csv" }],
    ] as const) {
      const res = await fetch(kiln.base + path, { headers: { authorization: `Bearer ${flow.token}`, ...headers } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
      const lines = (await res.text()).trim().split("\r\n");
      expect(lines[0]).toBe(
        "apiKeyId,runs,inputTokens,cachedInputTokens,cacheWriteInputTokens,outputTokens,reasoningTokens,costUsd,cacheHits,savedCostUsd",
      );
      expect(lines.slice(1).map((l) => l.split(",").slice(0, 2))).toEqual([
        ["", "25"],
        [flow.apiKeyId, "25"],
      ]);
    }
  });

  it("keeps organizations apart: another organization sees none of it, nor can it ask for it", async () => {
    expect((await usageOf(kiln.base, other, "day")).totals.runs).toBe(0);
    const res = await call(kiln.base, "GET", `/api/usage?organizationId=${flow.organizationId}`, {
      token: other.token,
    });
    expect(res.status).toBe(404);
    const keyed = await call(kiln.base, "GET", `/api/usage?organizationId=${flow.organizationId}`, {
      apiKey: other.apiKey,
    });
    expect([403, 404]).toContain(keyed.status);
  });

  it("counts an agent run's steps under the API key that ran it (usage by key, the key's budgets)", async () => {
    const owner = await runIdentityFlow(kiln.base, [...SCOPES, "agents:read"]);
    const client = createTestClient(kiln.base);
    const step = await client.createPublishedPrompt(owner.token, owner.organizationId, {
      model: "stub/priced",
      systemPrompt: "Answer.",
    });
    const agentId = await client.createPublishedAgent(owner.token, owner.organizationId, "one step", {
      inputSchema: { type: "object" },
      entry: "ask",
      steps: [{ id: "ask", type: "prompt", ref: { promptId: step.prompt.id }, input: {} }],
      output: "{{steps.ask.output}}",
    });
    const ran = await call(kiln.base, "POST", `/api/agents/${agentId}/run`, {
      apiKey: owner.apiKey,
      body: { organizationId: owner.organizationId, inputs: {} },
    });
    expect(ran.status, JSON.stringify(ran.body)).toBe(201);
    // The agent run and its step's prompt run.
    await counted(kiln.base, owner, 2);
    const stepRun = (await storedRuns(kiln.base, owner)).find((r: Loose) => r.kind === "prompt");
    expect(stepRun?.estimatedCostUsd).toBeGreaterThan(0);
    const byKey = await usageOf(kiln.base, owner, "apiKey");
    expect(byKey.data).toEqual([expect.objectContaining({ apiKeyId: owner.apiKeyId, runs: 2 })]);
    expect(byKey.data[0].costUsd).toBeCloseTo(stepRun.estimatedCostUsd, 9);
  });

  it("refuses bad input in the contract's shape", async () => {
    for (const q of [
      "groupBy=week",
      "from=2026-13-45",
      "from=2026-02-01&to=2026-01-01",
      "from=2020-01-01&to=2026-01-01",
    ]) {
      const res = await call(kiln.base, "GET", `/api/usage?organizationId=${flow.organizationId}&${q}`, {
        token: flow.token,
      });
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe("invalid_argument");
    }
  });
});

describe("the plan's monthly run limit (embedded mode)", () => {
  const secret = "usage-ledger-test-internal-secret-0123456789";
  let stub: OpenAIStub;
  let kiln: Awaited<ReturnType<typeof startEmbedded>>;
  let flow: FlowResult;
  let promptId: string;

  beforeAll(async () => {
    stub = await startStub();
    kiln = await startEmbedded({ providers: loadProvidersConfig(providerEnv(stub)), internalSecret: secret });
    flow = await runIdentityFlow(kiln.baseUrl, SCOPES);
    const p = await createTestClient(kiln.baseUrl).createPublishedPrompt(flow.token, flow.organizationId, {
      model: "stub/priced",
      systemPrompt: "Answer.",
    });
    promptId = p.prompt.id;
  }, 120_000);

  afterAll(async () => {
    await kiln?.kiln.close();
    await stub?.close();
  });

  const operator = () =>
    createClient(
      IdentityService,
      createDirectTransport(kiln.kiln.services.identity, [
        createForwardInterceptor(createInternalTokens(secret), { type: "service", id: "operator" }),
      ]),
    );

  it("lets only the platform operator set a plan", async () => {
    const res = await call(kiln.baseUrl, "GET", `/api/organizations/${flow.organizationId}`, { token: flow.token });
    expect(res.body.organization.entitlements.monthlyRunLimit).toBe(1000);
    const asOrg = createClient(
      IdentityService,
      createDirectTransport(kiln.kiln.services.identity, [
        createForwardInterceptor(createInternalTokens(secret), {
          type: "service",
          id: "someone",
          organizationId: flow.organizationId,
        }),
      ]),
    );
    await expect(
      asOrg.setOrganizationPlan({ organizationId: flow.organizationId, monthlyRunLimit: 0n }),
    ).rejects.toThrow(/platform operator/);
  });

  it("runs up to the limit under concurrency, refuses the next with 429 and Retry-After before any provider call", async () => {
    const set = await operator().setOrganizationPlan({
      organizationId: flow.organizationId,
      plan: "team",
      monthlyRunLimit: 12n,
    });
    expect(set.organization?.plan).toBe("team");
    // Identity's answers are cached up to 5 s by the services.
    await new Promise((r) => setTimeout(r, 5_500));
    const run = () =>
      call(kiln.baseUrl, "POST", `/api/prompts/${promptId}/run`, {
        apiKey: flow.apiKey,
        body: { organizationId: flow.organizationId, variables: {} },
      });
    const before = stub.requests.length;
    const results = await Promise.all(Array.from({ length: 20 }, run));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(12);
    expect(statuses.filter((s) => s === 429)).toHaveLength(8);
    expect(stub.requests.length - before).toBe(12);
    const refused = results.find((r) => r.status === 429) as Loose;
    expect(refused.body.error.code).toBe("resource_exhausted");
    const retryAfter = Number(refused.headers["retry-after"] ?? refused.headers.get?.("retry-after"));
    const now = new Date();
    const toMonth = (Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - now.getTime()) / 1000;
    expect(retryAfter).toBeGreaterThan(toMonth - 60);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(toMonth) + 1);
    // Counted by the ledger too, and still refused once the ledger has them (the count survives a re-read).
    await counted(kiln.baseUrl, flow, 12);
    await new Promise((r) => setTimeout(r, 1_200));
    expect((await run()).status).toBe(429);
    expect(stub.requests.length - before).toBe(12);
    // The /v1 surface is refused the same way.
    const v1 = await fetch(`${kiln.baseUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: `kiln/${promptId}`, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(v1.status).toBe(429);
    expect(Number(v1.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(stub.requests.length - before).toBe(12);
    // Raised by one: exactly one more run goes through.
    await operator().setOrganizationPlan({ organizationId: flow.organizationId, plan: "", monthlyRunLimit: 13n });
    await new Promise((r) => setTimeout(r, 5_500));
    expect((await run()).status).toBe(201);
    expect((await run()).status).toBe(429);
  }, 120_000);
});
