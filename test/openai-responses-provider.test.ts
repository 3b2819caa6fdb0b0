/**
 * Kiln calling OpenAI's Responses API (docs/providers.md "OpenAI's Responses API") over real HTTP,
 * in the embedded and the distributed mode, against the OpenAI stub: a deployment model of
 * OPENAI_COMPATIBLE_PROVIDERS with `api: "responses"` runs a prompt over REST (plain, and streamed
 * through POST /run/stream), the stub receives a Responses request (`store: false`, the rendered
 * input), and the stored run has every token class and the cost at the model's cached and
 * reasoning prices, while a model without `api` stays on Chat Completions. Then (embedded) an
 * organization's connection whose model says `api: "responses"` shows it and is called there, and
 * `api` on a kind that is not OpenAI's protocol is a 400 naming the field.
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { parseHostPatterns } from "@kiln/kit/outbound/host-patterns";
import { Kiln, type PromptRunStreamEvent } from "@kiln/sdk";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

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

const modes = [
  {
    name: "embedded mode",
    async start(stub: OpenAIStub) {
      const { kiln, baseUrl } = await startEmbedded({ providers: loadProvidersConfig(providerEnv(stub)) });
      return { base: baseUrl, stop: () => kiln.close() };
    },
  },
  {
    name: "distributed mode (FerretDB, NATS)",
    async start(stub: OpenAIStub) {
      const kiln = await startDistributed({
        mongoUrl: inject("mongoUrl"),
        natsUrl: inject("natsUrl"),
        envOf: { execution: providerEnv(stub) },
      });
      return { base: kiln.gatewayUrl, stop: () => kiln.stop() };
    },
  },
];

describe.each(modes)("a deployment model with api: responses ($name)", (mode) => {
  let stub: OpenAIStub;
  let running: { base: string; stop: () => Promise<void> };
  let flow: FlowResult;

  beforeAll(async () => {
    stub = await startOpenAIStub();
    running = await mode.start(stub);
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
