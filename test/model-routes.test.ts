/**
 * Model routes over real HTTP (docs/providers.md "Routes"; issue #48): the REST resource, a
 * fallback route whose first target starts failing halfway through a concurrent load (every run
 * still succeeds, its attempts recorded, the circuit breaker skipping the failing target after
 * its threshold), a weighted route spreading runs, a route bounding a hanging target, tenancy, and
 * the fallback in the distributed mode. Two OpenAI-compatible stubs stand in for two providers.
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";

interface Attempt {
  model: string;
  status: "succeeded" | "failed" | "skipped";
  latencyMs: number;
  error?: { code: string; message: string };
}
interface RunView {
  id: string;
  status: string;
  provider: string | null;
  model: string | null;
  route?: string;
  attempts?: Attempt[];
  output: { text: string } | null;
  error?: { code: string; details?: { field: string }[] };
}
interface RouteView {
  id: string;
  name: string;
  strategy: string;
  targets: { model: string; weight?: number }[];
  retryOn: string[];
  attemptTimeoutMs: number | null;
}

const BREAKER_FAILURES = 5;

/** Two stubs, "alpha" and "beta", each answering its own name unless told to fail. */
async function twoStubs() {
  const state = { alphaFailing: false, alphaHangs: false, alphaBreaks: false, failures: 0 };
  const alpha = await startOpenAIStub({
    respond: () => {
      if (state.alphaHangs) return stubReply.hang();
      if (state.alphaBreaks)
        return stubReply.text("from alpha in many words", { chunkDelayMs: 30, breakAfterChunks: 2 });
      if (!state.alphaFailing) return stubReply.text("from alpha");
      // Alternately 500 and 429 (with a Retry-After the route does not wait for).
      return state.failures++ % 2 === 0
        ? stubReply.error(500)
        : stubReply.error(429, { headers: { "retry-after": "1" } });
    },
  });
  const beta = await startOpenAIStub({ respond: () => stubReply.text("from beta") });
  const env = (a: OpenAIStub, b: OpenAIStub) => ({
    OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
      { id: "alpha", baseUrl: a.baseUrl, models: [{ model: "m1", inputPerMTokUsd: 1, outputPerMTokUsd: 2 }] },
      { id: "beta", baseUrl: b.baseUrl, models: [{ model: "m2", inputPerMTokUsd: 3, outputPerMTokUsd: 4 }] },
    ]),
    // A target with another after it is called without provider retries; the last keeps this.
    PROVIDER_MAX_RETRIES: "2",
  });
  return { alpha, beta, state, env: env(alpha, beta) };
}

interface Org {
  token: string;
  organizationId: string;
}

async function newOrg(api: TestClient): Promise<Org> {
  const { accessToken: token } = await api.signUp();
  const { organization } = await api.onboard(token);
  return { token, organizationId: organization.id };
}

/** A published prompt whose version runs `model`; returns its run function. */
async function promptOn(api: TestClient, org: Org, model: string) {
  const { prompt } = await api.createPublishedPrompt(org.token, org.organizationId, {
    systemPrompt: "Answer.",
    model,
  });
  return (body: Record<string, unknown> = {}) =>
    api.post<RunView>(
      `/api/prompts/${prompt.id}/run`,
      { organizationId: org.organizationId, variables: {}, ...body },
      { token: org.token },
    );
}

/** `n` calls of `call`, `concurrency` at a time; `halfway` runs once half have finished. */
async function load<T>(n: number, concurrency: number, call: () => Promise<T>, halfway: () => void): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        results.push(await call());
        if (++done === n / 2) halfway();
      }
    }),
  );
  return results;
}

/** The fallback load: 50 runs, 8 at once, alpha failing from the 25th on. */
async function fallbackUnderLoad(api: TestClient, org: Org, stubs: Awaited<ReturnType<typeof twoStubs>>) {
  const created = await api.post<RouteView>(
    "/api/model-routes",
    {
      organizationId: org.organizationId,
      name: "fb",
      strategy: "fallback",
      targets: [{ model: "alpha/m1" }, { model: "beta/m2" }],
    },
    { token: org.token },
  );
  expect(created.status).toBe(201);
  const run = await promptOn(api, org, "route/fb");
  const responses = await load(
    50,
    8,
    () => run(),
    () => {
      stubs.state.alphaFailing = true;
    },
  );
  for (const r of responses) expect(r.status).toBe(201);
  const runs = responses.map((r) => r.body);
  expect(runs.every((r) => r.status === "succeeded" && r.route === "fb")).toBe(true);
  // Every run is recorded as the target that answered, at that target's price.
  for (const r of runs) {
    const answered = r.attempts?.find((a) => a.status === "succeeded");
    expect(r.model).toBe(answered?.model);
    expect(r.provider).toBe(answered?.model.split("/")[0]);
    expect(r.output?.text).toBe(`from ${r.provider}`);
  }
  const alphaFailed = runs.filter((r) => r.attempts?.[0]?.status === "failed");
  const alphaSkipped = runs.filter((r) => r.attempts?.[0]?.status === "skipped");
  // The breaker opens after BREAKER_FAILURES consecutive failures; calls admitted before it opened may still fail.
  expect(alphaFailed.length).toBeGreaterThanOrEqual(BREAKER_FAILURES);
  expect(alphaFailed.length).toBeLessThanOrEqual(BREAKER_FAILURES + 8);
  expect(alphaSkipped.length).toBeGreaterThan(0);
  // Every run started after the switch (at least 50 − 25 done − 8 in flight) met alpha failing or skipped.
  expect(alphaFailed.length + alphaSkipped.length).toBeGreaterThanOrEqual(50 - 25 - 8);
  for (const r of alphaFailed) {
    expect(r.attempts?.map((a) => [a.model, a.status])).toEqual([
      ["alpha/m1", "failed"],
      ["beta/m2", "succeeded"],
    ]);
    expect(r.attempts?.[0]?.error?.code).toBe("provider_error");
  }
  for (const r of alphaSkipped) expect(r.attempts?.[0]).toEqual({ model: "alpha/m1", status: "skipped", latencyMs: 0 });
  // No provider retries inside the route: alpha saw one request per run that tried it.
  const alphaAfter = stubs.alpha.requests.length - (50 - alphaFailed.length - alphaSkipped.length);
  expect(alphaAfter).toBe(alphaFailed.length);
  // The stored run says the same.
  const stored = await api.get<RunView>(`/api/runs/${alphaFailed[0]?.id}`, { token: org.token });
  expect(stored.body.attempts).toEqual(alphaFailed[0]?.attempts);
  expect(stored.body.route).toBe("fb");
}

describe("model routes in the embedded mode", () => {
  let stubs: Awaited<ReturnType<typeof twoStubs>>;
  let kiln: Awaited<ReturnType<typeof startEmbedded>>["kiln"];
  let api: TestClient;
  let baseUrl: string;
  let a: Org;
  let b: Org;

  beforeAll(async () => {
    stubs = await twoStubs();
    const started = await startEmbedded({
      providers: loadProvidersConfig(stubs.env),
      modelRoutes: { breakerFailures: BREAKER_FAILURES, breakerOpenMs: 60_000 },
    });
    kiln = started.kiln;
    baseUrl = started.baseUrl;
    api = createTestClient(baseUrl);
    a = await newOrg(api);
    b = await newOrg(api);
  });

  afterAll(async () => {
    await kiln?.close();
    await stubs?.alpha.close();
    await stubs?.beta.close();
  });

  it("creates, lists, reads, changes and deletes routes; bad input is 400 naming the field, a clash 409", async () => {
    const post = (body: Record<string, unknown>) =>
      api.post<RouteView & { error: { code: string; details: { field: string }[] } }>(
        "/api/model-routes",
        { organizationId: a.organizationId, ...body },
        { token: a.token },
      );
    const created = await post({
      name: "crud",
      strategy: "weighted",
      targets: [{ model: "alpha/m1", weight: 2 }, { model: "local/echo" }],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: "crud",
      strategy: "weighted",
      targets: [{ model: "alpha/m1", weight: 2 }, { model: "local/echo" }],
      retryOn: ["429", "5xx", "529", "timeout", "connection"],
      attemptTimeoutMs: null,
    });
    const fieldsOf = async (body: Record<string, unknown>) => {
      const r = await post(body);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("invalid_argument");
      return r.body.error.details.map((d) => d.field);
    };
    const target = [{ model: "local/echo" }];
    expect(await fieldsOf({ name: "Not A Slug", strategy: "fallback", targets: target })).toContain("name");
    expect(await fieldsOf({ name: "x", strategy: "fallback", targets: [{ model: "route/crud" }] })).toEqual([
      "targets[0].model",
    ]);
    expect(
      await fieldsOf({ name: "x", strategy: "fallback", targets: [{ model: "local/echo" }, { model: "nope/model" }] }),
    ).toEqual(["targets[1].model"]);
    expect(await fieldsOf({ name: "x", strategy: "fallback", targets: [] })).toContain("targets");
    expect((await fieldsOf({ name: "x", strategy: "fallback", targets: target, retryOn: ["418"] }))[0]).toMatch(
      /^retryOn/,
    );
    expect(await fieldsOf({ name: "x", strategy: "weighted", targets: [{ model: "local/echo", weight: 0 }] })).toEqual([
      "targets",
    ]);
    const clash = await post({ name: "crud", strategy: "fallback", targets: target });
    expect(clash.status).toBe(409);
    // Another organization may use the same name.
    const elsewhere = await api.post(
      "/api/model-routes",
      { organizationId: b.organizationId, name: "crud", strategy: "fallback", targets: target },
      { token: b.token },
    );
    expect(elsewhere.status).toBe(201);

    const second = await post({
      name: "crud-two",
      strategy: "fallback",
      targets: target,
      retryOn: ["5xx"],
      attemptTimeoutMs: 2000,
    });
    expect(second.body).toMatchObject({ retryOn: ["5xx"], attemptTimeoutMs: 2000 });
    const page = await api.get<{ data: RouteView[]; nextCursor: string | null }>("/api/model-routes", {
      token: a.token,
      query: { organizationId: a.organizationId, limit: "1" },
    });
    expect(page.status).toBe(200);
    expect(page.body.data.map((r) => r.name)).toEqual(["crud-two"]);
    const rest = await api.get<{ data: RouteView[]; nextCursor: string | null }>("/api/model-routes", {
      token: a.token,
      query: { organizationId: a.organizationId, limit: "1", cursor: page.body.nextCursor ?? "" },
    });
    expect(rest.body.data.map((r) => r.name)).toEqual(["crud"]);

    const changed = await api.patch<RouteView>(
      `/api/model-routes/${second.body.id}`,
      { name: "crud-2", attemptTimeoutMs: null },
      { token: a.token },
    );
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ name: "crud-2", attemptTimeoutMs: null, retryOn: ["5xx"] });
    expect((await api.patch(`/api/model-routes/${second.body.id}`, { name: "crud" }, { token: a.token })).status).toBe(
      409,
    );
    expect(
      (
        await api.patch(
          `/api/model-routes/${second.body.id}`,
          { targets: [{ model: "route/crud" }] },
          { token: a.token },
        )
      ).status,
    ).toBe(400);

    const run = await promptOn(api, a, "route/crud-2");
    const ran = await run();
    expect(ran.status).toBe(201);
    expect(ran.body).toMatchObject({ status: "succeeded", route: "crud-2", provider: "local", model: "local/echo" });
    const deleted = await api.delete<RouteView>(`/api/model-routes/${second.body.id}`, { token: a.token });
    expect(deleted.status).toBe(200);
    expect((await api.get(`/api/model-routes/${second.body.id}`, { token: a.token })).status).toBe(404);
    // A deleted route is an unknown model at once in this process.
    const after = await run();
    expect(after.status).toBe(400);
  });

  it("a fallback route keeps 50 concurrent runs succeeding while its first target fails halfway", async () => {
    await fallbackUnderLoad(api, a, stubs);
  });

  it("a weighted route spreads runs by weight, and attemptTimeoutMs moves on from a hanging target", async () => {
    const c = await newOrg(api);
    stubs.state.alphaFailing = false;
    await api.post(
      "/api/model-routes",
      {
        organizationId: c.organizationId,
        name: "spread",
        strategy: "weighted",
        targets: [
          { model: "alpha/m1", weight: 3 },
          { model: "beta/m2", weight: 1 },
        ],
      },
      { token: c.token },
    );
    const run = await promptOn(api, c, "route/spread");
    const counts: Record<string, number> = {};
    for (let i = 0; i < 40; i++) {
      const r = await run();
      expect(r.body.status).toBe("succeeded");
      counts[r.body.model ?? ""] = (counts[r.body.model ?? ""] ?? 0) + 1;
    }
    expect(counts["beta/m2"] ?? 0).toBeGreaterThan(0);
    expect(counts["alpha/m1"] ?? 0).toBeGreaterThan(counts["beta/m2"] ?? 0);

    stubs.state.alphaHangs = true;
    try {
      await api.post(
        "/api/model-routes",
        {
          organizationId: c.organizationId,
          name: "bounded",
          strategy: "fallback",
          targets: [{ model: "alpha/m1" }, { model: "beta/m2" }],
          attemptTimeoutMs: 300,
        },
        { token: c.token },
      );
      const bounded = await (await promptOn(api, c, "route/bounded"))();
      expect(bounded.body.status).toBe("succeeded");
      expect(bounded.body.model).toBe("beta/m2");
      const [first] = bounded.body.attempts ?? [];
      expect(first).toMatchObject({ model: "alpha/m1", status: "failed", error: { code: "provider_timeout" } });
      expect(first?.latencyMs).toBeGreaterThanOrEqual(250);
      expect(first?.latencyMs).toBeLessThan(5_000);
    } finally {
      stubs.state.alphaHangs = false;
    }
  });

  it("a streamed run falls back before the first byte, and fails once a piece went to the client", async () => {
    const d = await newOrg(api);
    await api.post(
      "/api/model-routes",
      {
        organizationId: d.organizationId,
        name: "live",
        strategy: "fallback",
        targets: [{ model: "alpha/m1" }, { model: "beta/m2" }],
      },
      { token: d.token },
    );
    const { prompt } = await api.createPublishedPrompt(d.token, d.organizationId, {
      systemPrompt: "Answer.",
      model: "route/live",
    });
    const stream = async () => {
      const res = await fetch(`${baseUrl}/api/prompts/${prompt.id}/run/stream`, {
        method: "POST",
        headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
        body: JSON.stringify({ organizationId: d.organizationId, variables: {} }),
      });
      expect(res.status).toBe(200);
      const events = (await res.text())
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => JSON.parse(l.slice(5)) as { type: string; delta?: string; run?: RunView });
      return { text: events.flatMap((e) => (e.type === "text" ? [e.delta] : [])).join(""), run: events.at(-1)?.run };
    };
    stubs.state.alphaFailing = true;
    try {
      const fellBack = await stream();
      expect(fellBack.text).toBe("from beta");
      expect(fellBack.run).toMatchObject({ status: "succeeded", route: "live", model: "beta/m2" });
      expect(fellBack.run?.attempts?.map((a) => a.status)).toEqual(["failed", "succeeded"]);
    } finally {
      stubs.state.alphaFailing = false;
    }
    stubs.state.alphaBreaks = true;
    const betaBefore = stubs.beta.requests.length;
    try {
      const broken = await stream();
      expect(broken.text).toMatch(/^from alpha/);
      expect(broken.run).toMatchObject({ status: "failed", route: "live", model: "alpha/m1" });
      expect(broken.run?.attempts?.map((a) => [a.model, a.status])).toEqual([["alpha/m1", "failed"]]);
      expect(stubs.beta.requests.length).toBe(betaBefore);
    } finally {
      stubs.state.alphaBreaks = false;
    }
  });

  it("an agent's prompt step whose version names a route runs through it, attempts recorded on the step's run", async () => {
    const created = await api.post<RouteView>(
      "/api/model-routes",
      {
        organizationId: a.organizationId,
        name: "agent-fb",
        strategy: "fallback",
        targets: [{ model: "alpha/m1" }, { model: "beta/m2" }],
      },
      { token: a.token },
    );
    expect(created.status).toBe(201);
    const { prompt } = await api.createPublishedPrompt(a.token, a.organizationId, {
      systemPrompt: "Answer {{q}}.",
      variablesSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
      model: "route/agent-fb",
    });
    const agent = await api.post<{ id: string; draftVersionId: string }>(
      "/api/agents",
      { organizationId: a.organizationId, name: "Routed agent" },
      { token: a.token },
    );
    expect(agent.status).toBe(201);
    const workflow = {
      inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
      entry: "ask",
      steps: [{ id: "ask", type: "prompt", ref: { promptId: prompt.id }, input: { q: "{{inputs.q}}" } }],
      output: "{{steps.ask.output}}",
    };
    const saved = await api.request("PUT", `/api/agent-versions/${agent.body.draftVersionId}/workflow`, {
      token: a.token,
      body: { workflow },
    });
    expect(saved.status).toBe(200);
    expect((await api.post(`/api/agents/${agent.body.id}/publish`, {}, { token: a.token })).status).toBe(200);
    stubs.state.alphaFailing = true;
    try {
      const ran = await api.post<{ id: string; status: string; steps: { runId?: string; model?: string }[] }>(
        `/api/agents/${agent.body.id}/run`,
        { organizationId: a.organizationId, inputs: { q: "why" } },
        { token: a.token },
      );
      expect(ran.status, ran.text).toBe(201);
      expect(ran.body.status).toBe("succeeded");
      const stepRunId = ran.body.steps[0]?.runId;
      expect(stepRunId).toBeDefined();
      const child = await api.get<RunView>(`/api/runs/${stepRunId}`, { token: a.token });
      expect(child.body).toMatchObject({ status: "succeeded", route: "agent-fb", model: "beta/m2" });
      expect(child.body.output?.text).toBe("from beta");
      // alpha fails, or is skipped when an earlier test left its breaker open.
      const attempts = child.body.attempts ?? [];
      expect(attempts.map((t) => t.model)).toEqual(["alpha/m1", "beta/m2"]);
      expect(["failed", "skipped"]).toContain(attempts[0]?.status);
      expect(attempts[1]?.status).toBe("succeeded");
    } finally {
      stubs.state.alphaFailing = false;
    }
  });

  it("an organization cannot see or run another's route", async () => {
    const mine = await api.post<RouteView>(
      "/api/model-routes",
      {
        organizationId: a.organizationId,
        name: "private",
        strategy: "fallback",
        targets: [{ model: "local/echo" }],
      },
      { token: a.token },
    );
    expect(mine.status).toBe(201);
    expect((await api.get(`/api/model-routes/${mine.body.id}`, { token: b.token })).status).toBe(404);
    expect((await api.patch(`/api/model-routes/${mine.body.id}`, { name: "taken" }, { token: b.token })).status).toBe(
      404,
    );
    expect((await api.delete(`/api/model-routes/${mine.body.id}`, { token: b.token })).status).toBe(404);
    const list = await api.get("/api/model-routes", { token: b.token, query: { organizationId: a.organizationId } });
    expect([403, 404]).toContain(list.status);
    const run = await promptOn(api, b, "route/private");
    const ran = await run();
    expect(ran.status).toBe(400);
    expect(ran.body).toMatchObject({ error: { code: "invalid_argument", details: [{ field: "model" }] } });
    // And with the route named by the run request itself.
    const own = await promptOn(api, b, "local/echo");
    expect((await own({ model: "route/private" })).status).toBe(400);
    expect((await api.get(`/api/model-routes/${mine.body.id}`, { token: a.token })).status).toBe(200);
  });
});

describe("model routes in the distributed mode", () => {
  let stubs: Awaited<ReturnType<typeof twoStubs>>;
  let kiln: Awaited<ReturnType<typeof startDistributed>>;
  let api: TestClient;

  beforeAll(async () => {
    stubs = await twoStubs();
    kiln = await startDistributed({
      mongoUrl: inject("mongoUrl"),
      natsUrl: inject("natsUrl"),
      envOf: {
        execution: { ...stubs.env, ROUTE_BREAKER_FAILURES: String(BREAKER_FAILURES), ROUTE_BREAKER_OPEN_MS: "60000" },
      },
    });
    api = createTestClient(kiln.gatewayUrl);
  }, 120_000);

  afterAll(async () => {
    await kiln?.stop();
    await stubs?.alpha.close();
    await stubs?.beta.close();
  });

  it("a fallback route keeps 50 concurrent runs succeeding while its first target fails halfway", async () => {
    await fallbackUnderLoad(api, await newOrg(api), stubs);
  }, 120_000);
});
