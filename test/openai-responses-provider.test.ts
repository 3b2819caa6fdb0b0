import { parseHostPatterns } from "@kiln/kit/outbound/host-patterns";
import { Kiln, type PromptRunStreamEvent } from "@kiln/sdk";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbedded } from "./support/embedded.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { PROVIDER_MODES, type RunningKiln } from "./support/provider-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: stored runs are read loosely and asserted on.
type Loose = any;

const PRICES = { inputPerMTokUsd: 2, cachedInputPerMTokUsd: 0.5, outputPerMTokUsd: 8, reasoningPerMTokUsd: 12 };
const providerEnv = (stub: OpenAIStub) => ({
  OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
    {
      id: "stub",
      baseUrl: stub.baseUrl,
      models: [
        { model: "codex", api: "responses", ...PRICES },
        { model: "chatty", inputPerMTokUsd: 1, outputPerMTokUsd: 2 },
      ],
    },
  ]),
  PROVIDER_MAX_RETRIES: "1",
});

const USAGE = {
  prompt_tokens: 2006,
  completion_tokens: 300,
  prompt_tokens_details: { cached_tokens: 1920 },
  completion_tokens_details: { reasoning_tokens: 192 },
};
/** 86 uncached input at 2, 1920 cached at 0.5, 108 output at 8 and 192 reasoning at 12 USD per million. */
const COST = (86 * 2 + 1920 * 0.5 + 108 * 8 + 192 * 12) / 1e6;
const USAGE_VIEW = {
  inputTokens: 2006,
  outputTokens: 300,
  cachedInputTokens: 1920,
  cacheWriteInputTokens: 0,
  reasoningTokens: 192,
};

describe.each(PROVIDER_MODES)("a deployment model with api: responses ($name)", (mode) => {
  let stub: OpenAIStub;
  let running: RunningKiln;
  let flow: FlowResult;

  beforeAll(async () => {
    stub = await startOpenAIStub();
    running = await mode.start(providerEnv(stub));
    flow = await runIdentityFlow(running.base, ["prompts:read", "runs:write", "runs:read"]);
  }, 180_000);
  afterAll(async () => {
    await running?.stop();
    await stub?.close();
  });

  const publish = (model: string) =>
    createTestClient(running.base).createPublishedPrompt(flow.token, flow.organizationId, {
      model,
      systemPrompt: "Review {{file}} tersely.",
      variablesSchema: { type: "object", properties: { file: { type: "string" } }, required: ["file"] },
    });

  it("runs a prompt through POST /responses and stores every token class and the cost at the cached and reasoning prices", async () => {
    const { prompt } = await publish("stub/codex");
    stub.reset();
    stub.script(stubReply.rateLimited({ retryAfterMs: 20 }), stubReply.text("Looks fine.", { usage: USAGE }));
    const run = await call(running.base, "POST", `/api/prompts/${prompt.id}/run`, {
      token: flow.apiKey,
      body: { organizationId: flow.organizationId, variables: { file: "main.ts" } },
    });
    expect(run.status, JSON.stringify(run.body)).toBe(201);
    expect(run.body).toMatchObject({ status: "succeeded", model: "stub/codex", output: { text: "Looks fine." } });
    const stored = await call(running.base, "GET", `/api/runs/${run.body.id}`, { token: flow.token });
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ status: "succeeded", usage: USAGE_VIEW });
    expect(stored.body.estimatedCostUsd).toBeCloseTo(COST, 12);
    expect(stored.body).not.toHaveProperty("costNotes");

    expect(stub.requests.map((r) => r.path)).toEqual(["/v1/responses", "/v1/responses"]);
    const sent = stub.requests[1]?.body;
    expect(sent).toMatchObject({ model: "codex", store: false });
    expect(sent).not.toHaveProperty("messages");
    expect(JSON.stringify(sent.input)).toContain("Review main.ts tersely.");
  });

  it("streams a run on the Responses API: pieces as they come, done with the stored usage and cost", async () => {
    const { prompt } = await publish("stub/codex");
    stub.reset();
    stub.script(stubReply.text("One two three.", { usage: USAGE, chunkDelayMs: 20 }));
    const kiln = new Kiln({ baseUrl: running.base, apiKey: flow.apiKey, maxRetries: 0 });
    const events: PromptRunStreamEvent[] = [];
    for await (const event of kiln.prompts.stream(prompt.id, {
      organizationId: flow.organizationId,
      variables: { file: "a.ts" },
    }))
      events.push(event);
    const texts = events.flatMap((e) => (e.type === "text" ? [e.delta] : []));
    expect(texts).toEqual(["One ", "two ", "three."]);
    const done = events.at(-1) as Loose;
    expect(done?.type).toBe("done");
    expect(done.run).toMatchObject({ status: "succeeded", output: { text: "One two three." }, usage: USAGE_VIEW });
    expect(done.run.estimatedCostUsd).toBeCloseTo(COST, 12);
    expect(stub.requests[0]).toMatchObject({ path: "/v1/responses", body: { stream: true, store: false } });
  });

  it("keeps a model without api on Chat Completions", async () => {
    const { prompt } = await publish("stub/chatty");
    stub.reset();
    const run = await call(running.base, "POST", `/api/prompts/${prompt.id}/run`, {
      token: flow.apiKey,
      body: { organizationId: flow.organizationId, variables: { file: "b.ts" } },
    });
    expect(run.status, JSON.stringify(run.body)).toBe(201);
    expect(stub.requests.map((r) => r.path)).toEqual(["/v1/chat/completions"]);
  });
});

describe("a connection model with api: responses (embedded mode)", () => {
  let stub: OpenAIStub;
  let stop: () => Promise<void>;
  let base: string;

  beforeAll(async () => {
    stub = await startOpenAIStub();
    const started = await startEmbedded({ connections: { privateHosts: parseHostPatterns("127.0.0.1") } });
    base = started.baseUrl;
    stop = () => started.kiln.close();
  });
  afterAll(async () => {
    await stop?.();
    await stub?.close();
  });

  it("stores and shows the model's api, runs it on /responses, and refuses api for another kind's model", async () => {
    const api = createTestClient(base);
    const owner = (await api.signUp()).accessToken;
    const organizationId = (await api.onboard(owner)).organization.id;
    const created = await api.post<Loose>(
      "/api/provider-connections",
      {
        organizationId,
        name: "proxy",
        provider: "openai_compatible",
        baseUrl: stub.baseUrl,
        models: [{ model: "codex", api: "responses", ...PRICES }, { model: "chat" }],
      },
      { token: owner },
    );
    expect(created.status, created.text).toBe(201);
    expect(created.body.models).toMatchObject([{ id: "proxy/codex", api: "responses" }, { id: "proxy/chat" }]);
    expect(created.body.models[1]).not.toHaveProperty("api");

    const { prompt } = await api.createPublishedPrompt(owner, organizationId, {
      model: "proxy/codex",
      systemPrompt: "Say hi.",
    });
    stub.script(stubReply.text("hi", { usage: USAGE }));
    const run = await api.post<Loose>(
      `/api/prompts/${prompt.id}/run`,
      { organizationId, variables: {} },
      { token: owner },
    );
    expect(run.status, run.text).toBe(201);
    expect(run.body).toMatchObject({ status: "succeeded", usage: USAGE_VIEW });
    expect(run.body.estimatedCostUsd).toBeCloseTo(COST, 12);
    expect(stub.requests.at(-1)).toMatchObject({ path: "/v1/responses", body: { model: "codex", store: false } });

    for (const [provider, api_, field] of [
      ["anthropic", "responses", "models[0].api"],
      ["openai_compatible", "assistants", "models[0].api"],
    ] as const) {
      const refused = await api.post<Loose>(
        "/api/provider-connections",
        { organizationId, name: "bad", provider, baseUrl: stub.baseUrl, models: [{ model: "m", api: api_ }] },
        { token: owner },
      );
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
  });
});
