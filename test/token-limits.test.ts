import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { PROVIDER_MODES, type RunningKiln } from "./support/provider-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: bodies are asserted field by field.
type Loose = any;

const USAGE = { prompt_tokens: 1200, completion_tokens: 150 };
/** What one run counts: its input and output tokens. */
const RUN_TOKENS = 1350;
/** The deployment model with a limit: three runs' tokens a minute, every organization's together. */
const MODEL_TPM = 3 * RUN_TOKENS;
const providerEnv = (stub: OpenAIStub) => ({
  OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
    {
      id: "stub",
      baseUrl: stub.baseUrl,
      models: [
        { model: "free", inputPerMTokUsd: 3, outputPerMTokUsd: 15 },
        { model: "limited", inputPerMTokUsd: 3, outputPerMTokUsd: 15, tokensPerMinute: MODEL_TPM },
      ],
    },
  ]),
  PROVIDER_MAX_RETRIES: "0",
  PROVIDER_PRIVATE_HOSTS: "127.0.0.1",
});
const SCOPES = ["prompts:read", "runs:write", "runs:read"];

describe.each(PROVIDER_MODES)("token-per-minute limits ($name)", (mode) => {
  let stub: OpenAIStub;
  let running: RunningKiln;

  beforeAll(async () => {
    stub = await startOpenAIStub({ latencyMs: 5, respond: () => stubReply.text("ok", { usage: USAGE }) });
    running = await mode.start(providerEnv(stub));
  }, 180_000);

  afterAll(async () => {
    await running?.stop();
    await stub?.close();
  });

  /** An organization with a published prompt on `model`. */
  async function organization(model = "stub/free") {
    const flow = await runIdentityFlow(running.base, SCOPES);
    const p = await createTestClient(running.base).createPublishedPrompt(flow.token, flow.organizationId, {
      model,
      systemPrompt: "Answer.",
    });
    return { flow, promptId: p.prompt.id as string };
  }
  type Org = Awaited<ReturnType<typeof organization>>;

  const api = (flow: FlowResult, method: string, path: string, body?: unknown) =>
    call(running.base, method, path, { token: flow.token, ...(body !== undefined ? { body } : {}) });
  const run = (org: Org, auth: { apiKey: string } | { token: string }, promptId = org.promptId) =>
    call(running.base, "POST", `/api/prompts/${promptId}/run`, {
      ...auth,
      body: { organizationId: org.flow.organizationId, variables: {} },
    });
  const createKey = (org: Org, extra: Record<string, unknown> = {}) =>
    api(org.flow, "POST", "/api/api-keys", {
      organizationId: org.flow.organizationId,
      name: "limited",
      scopes: SCOPES,
      ...extra,
    });
  const keysOf = async (org: Org): Promise<Loose[]> =>
    (await api(org.flow, "GET", `/api/api-keys?organizationId=${org.flow.organizationId}`)).body.data;

  it("refuses a key's next run once its runs' tokens reach its limit, with Retry-After and no provider call; another key runs", async () => {
    const org = await organization();
    const created = await createKey(org, { tokensPerMinute: 2 * RUN_TOKENS });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.tokensPerMinute).toBe(2 * RUN_TOKENS);
    const key: string = created.body.key;
    const keyId: string = created.body.id;
    // The key's views show the limit, never the secret.
    const view = (await keysOf(org)).find((k) => k.id === keyId);
    expect(view).toMatchObject({ id: keyId, tokensPerMinute: 2 * RUN_TOKENS });
    expect(JSON.stringify(view)).not.toContain(key.split("_")[2]);
    expect((await keysOf(org)).find((k) => k.id === org.flow.apiKeyId)?.tokensPerMinute).toBeNull();

    expect((await run(org, { apiKey: key })).status).toBe(201);
    expect((await run(org, { apiKey: key })).status).toBe(201);
    const before = stub.requests.length;
    const refused = await run(org, { apiKey: key });
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    expect(refused.body.error.code).toBe("resource_exhausted");
    expect(refused.body.error.details).toContainEqual({ field: "tokensPerMinute", issue: `api_key:${keyId}` });
    expect(refused.body.error.message).toContain(`API key ${keyId} allows ${2 * RUN_TOKENS} tokens a minute`);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    // /v1/* in OpenAI's and Anthropic's 429 shapes, with Retry-After.
    const v1 = (path: string, body: unknown) =>
      fetch(`${running.base}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const model = `kiln/${org.promptId}`;
    const openai = await v1("/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }] });
    expect(openai.status).toBe(429);
    expect(Number(openai.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const openaiBody: Loose = await openai.json();
    expect(openaiBody.error).toMatchObject({ type: "requests", code: "rate_limit_exceeded" });
    expect(openaiBody.error.message).toContain(`tokensPerMinute api_key:${keyId}`);
    const anthropic = await v1("/v1/messages", { model, max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    expect(anthropic.status).toBe(429);
    expect(((await anthropic.json()) as Loose).error.type).toBe("rate_limit_error");
    // None of the refused runs called the provider.
    expect(stub.requests.length).toBe(before);

    // Another key of the organization, and a signed-in member, still run.
    expect((await run(org, { apiKey: org.flow.apiKey })).status).toBe(201);
    expect((await run(org, { token: org.flow.token })).status).toBe(201);
    expect((await run(org, { apiKey: key })).status).toBe(429);
  }, 120_000);

  it("a deployment model's limit refuses runs on that model only, whichever organization runs them", async () => {
    const org = await organization("stub/limited");
    const other = await organization("stub/limited");
    const free = await createTestClient(running.base).createPublishedPrompt(org.flow.token, org.flow.organizationId, {
      model: "stub/free",
      systemPrompt: "Free.",
    });
    // Three runs, two from each organization in turn: the model's window counts them together.
    expect((await run(org, { apiKey: org.flow.apiKey })).status).toBe(201);
    expect((await run(other, { token: other.flow.token })).status).toBe(201);
    expect((await run(org, { token: org.flow.token })).status).toBe(201);
    const before = stub.requests.length;
    for (const [who, auth] of [
      [other, { apiKey: other.flow.apiKey }],
      [org, { token: org.flow.token }],
    ] as [Org, { apiKey: string } | { token: string }][]) {
      const refused = await run(who, auth);
      expect(refused.status, JSON.stringify(refused.body)).toBe(429);
      expect(refused.body.error.details).toContainEqual({ field: "tokensPerMinute", issue: "model:stub/limited" });
      expect(refused.body.error.message).toContain(`model stub/limited allows ${MODEL_TPM} tokens a minute`);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    expect(stub.requests.length).toBe(before);
    // The organization's prompt on another model runs.
    expect((await run(org, { apiKey: org.flow.apiKey }, free.prompt.id)).status).toBe(201);
  }, 120_000);

  it("a connection model's limit counts that connection's runs: another organization's connection of the same name runs", async () => {
    const connect = (org: Org, models: unknown[]) =>
      api(org.flow, "POST", "/api/provider-connections", {
        organizationId: org.flow.organizationId,
        name: "own",
        provider: "openai_compatible",
        baseUrl: stub.baseUrl,
        models,
      });
    const [a, b] = [await organization("own/m"), await organization("own/m")];
    const bad = await connect(a, [{ model: "m", tokensPerMinute: 0 }]);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toContainEqual(expect.objectContaining({ field: "models[0].tokensPerMinute" }));
    for (const org of [a, b]) {
      const c = await connect(org, [{ model: "m", tokensPerMinute: 2 * RUN_TOKENS }]);
      expect(c.status, JSON.stringify(c.body)).toBe(201);
      expect(c.body.models[0]).toMatchObject({ id: "own/m", tokensPerMinute: 2 * RUN_TOKENS });
    }
    const listed = await api(a.flow, "GET", `/api/models?organizationId=${a.flow.organizationId}`);
    expect(listed.body.data.find((m: Loose) => m.id === "own/m")).toMatchObject({ tokensPerMinute: 2 * RUN_TOKENS });
    expect(listed.body.data.find((m: Loose) => m.id === "stub/limited")).toMatchObject({ tokensPerMinute: MODEL_TPM });
    expect(listed.body.data.find((m: Loose) => m.id === "stub/free")).not.toHaveProperty("tokensPerMinute");
    expect((await run(a, { token: a.flow.token })).status).toBe(201);
    expect((await run(a, { apiKey: a.flow.apiKey })).status).toBe(201);
    const refused = await run(a, { token: a.flow.token });
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    expect(refused.body.error.details).toContainEqual({ field: "tokensPerMinute", issue: "model:own/m" });
    // The other organization's "own/m" is its own connection: its window is its own.
    expect((await run(b, { token: b.flow.token })).status).toBe(201);
  }, 120_000);

  it("a route skips a target whose minute is spent without calling it, and is refused only when every target's is", async () => {
    const org = await organization("route/spread");
    const c = await api(org.flow, "POST", "/api/provider-connections", {
      organizationId: org.flow.organizationId,
      name: "own",
      provider: "openai_compatible",
      baseUrl: stub.baseUrl,
      models: [
        { model: "m1", tokensPerMinute: 2 * RUN_TOKENS },
        { model: "m2", tokensPerMinute: RUN_TOKENS },
      ],
    });
    expect(c.status, JSON.stringify(c.body)).toBe(201);
    const route = await api(org.flow, "POST", "/api/model-routes", {
      organizationId: org.flow.organizationId,
      name: "spread",
      strategy: "fallback",
      targets: [{ model: "own/m1" }, { model: "own/m2" }],
    });
    expect(route.status, JSON.stringify(route.body)).toBe(201);
    const answered: Loose[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await run(org, { token: org.flow.token });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      answered.push(r.body);
    }
    expect(answered.map((r) => r.model)).toEqual(["own/m1", "own/m1", "own/m2"]);
    // The spent target was skipped, named with its limit, and never called.
    expect(answered[2].attempts).toEqual([
      expect.objectContaining({
        model: "own/m1",
        status: "skipped",
        error: expect.objectContaining({
          message: expect.stringContaining(`model own/m1 allows ${2 * RUN_TOKENS} tokens a minute`),
        }),
      }),
      expect.objectContaining({ model: "own/m2", status: "succeeded" }),
    ]);
    const before = stub.requests.length;
    const refused = await run(org, { token: org.flow.token });
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    expect(refused.body.error.details).toContainEqual({ field: "tokensPerMinute", issue: "model:route/spread" });
    expect(refused.body.error.message).toContain("every target of model route/spread has used its tokens a minute");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(stub.requests.length).toBe(before);
  }, 120_000);

  it("refuses 0, negative, fractional, too large and non-number limits with 400 naming the field, creating and changing nothing", async () => {
    const org = await organization();
    const keysBefore = (await keysOf(org)).length;
    for (const tokensPerMinute of [0, -1, 1.5, 1_000_000_001, "100"]) {
      const res = await createKey(org, { tokensPerMinute });
      expect(res.status, JSON.stringify(tokensPerMinute)).toBe(400);
      expect(res.body.error.code).toBe("invalid_argument");
      expect(JSON.stringify(res.body.error.details), JSON.stringify(tokensPerMinute)).toContain("tokensPerMinute");
    }
    expect((await keysOf(org)).length).toBe(keysBefore);
    const key = await createKey(org, { tokensPerMinute: 1_000 });
    for (const tokensPerMinute of [0, -1, 2.5, 1_000_000_001]) {
      const res = await api(org.flow, "PATCH", `/api/api-keys/${key.body.id}`, { tokensPerMinute });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.error.details)).toContain("tokensPerMinute");
    }
    expect((await api(org.flow, "PATCH", `/api/api-keys/${key.body.id}`, { extra: 1 })).status).toBe(400);
    expect((await keysOf(org)).find((k) => k.id === key.body.id)?.tokensPerMinute).toBe(1_000);
    // The largest limit is one.
    const max = await createKey(org, { tokensPerMinute: 1_000_000_000 });
    expect(max.status).toBe(201);
    expect(max.body.tokensPerMinute).toBe(1_000_000_000);
    // Another organization's key is not there for it.
    const stranger = await organization();
    expect((await api(stranger.flow, "PATCH", `/api/api-keys/${key.body.id}`, { tokensPerMinute: 5 })).status).toBe(
      404,
    );
    expect((await keysOf(org)).find((k) => k.id === key.body.id)?.tokensPerMinute).toBe(1_000);
  }, 120_000);

  it("a PATCH of the limit applies to the key's next run at once; null removes it", async () => {
    const org = await organization();
    const created = await createKey(org, { tokensPerMinute: 1_000_000 });
    const key: string = created.body.key;
    const keyId: string = created.body.id;
    expect((await run(org, { apiKey: key })).status).toBe(201);
    expect((await run(org, { apiKey: key })).status).toBe(201);
    // Lowered under what its last minute used: the next run through this gateway is refused.
    const lowered = await api(org.flow, "PATCH", `/api/api-keys/${keyId}`, { tokensPerMinute: 2 * RUN_TOKENS });
    expect(lowered.status, JSON.stringify(lowered.body)).toBe(200);
    expect(lowered.body).toMatchObject({ id: keyId, tokensPerMinute: 2 * RUN_TOKENS, revokedAt: null });
    const refused = await run(org, { apiKey: key });
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toContain(`allows ${2 * RUN_TOKENS} tokens a minute`);
    // Raised: at once again.
    await api(org.flow, "PATCH", `/api/api-keys/${keyId}`, { tokensPerMinute: 3 * RUN_TOKENS });
    expect((await run(org, { apiKey: key })).status).toBe(201);
    expect((await run(org, { apiKey: key })).status).toBe(429);
    // Removed: no limit, the key runs, and its view says null.
    const removed = await api(org.flow, "PATCH", `/api/api-keys/${keyId}`, { tokensPerMinute: null });
    expect(removed.body.tokensPerMinute).toBeNull();
    expect((await run(org, { apiKey: key })).status).toBe(201);
    expect((await keysOf(org)).find((k) => k.id === keyId)?.tokensPerMinute).toBeNull();
    // A PATCH with nothing in it changes nothing.
    expect((await api(org.flow, "PATCH", `/api/api-keys/${keyId}`, {})).body.tokensPerMinute).toBeNull();
  }, 120_000);
});
