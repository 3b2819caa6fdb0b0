/**
 * Usage and cost end to end (docs/providers.md "How usage is priced"), over real HTTP against the
 * embedded platform whose OpenAI provider and an OpenAI-compatible one are the Chat Completions
 * stub: answers that report cached and reasoning tokens (OpenAI's `prompt_tokens_details`,
 * `completion_tokens_details`) are stored on the run class by class, priced each at its own
 * price to the exact figure (the built-in gpt-4o-mini prices, a compatible model's configured
 * ones, and a model without a cached price whose run says so), summed over a skill's steps, and
 * shown by `GET /api/models`, `GET /api/runs/:id`, the streamed run and `/v1/chat/completions`.
 */

import { loadProvidersConfig } from "@kiln/execution/config";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

// biome-ignore lint/suspicious/noExplicitAny: run bodies are asserted field by field.
type Loose = any;

/** OpenAI's documented shape: 2006 prompt tokens of which 1920 cached, 300 completion tokens of which 192 reasoning. */
const DETAILED = {
  prompt_tokens: 2006,
  completion_tokens: 300,
  prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 192, audio_tokens: 0 },
};
const DETAILED_USAGE = { inputTokens: 2006, outputTokens: 300, cachedInputTokens: 1920, reasoningTokens: 192 };

/** Each class at its own price (USD per million tokens), as docs/providers.md writes the sum. */
const costOf = (p: { input: number; cached: number; output: number; reasoning: number }) =>
  ((2006 - 1920) * p.input + 1920 * p.cached + (300 - 192) * p.output + 192 * p.reasoning) / 1_000_000;

describe("usage and cost, each token class at its own price", () => {
  let stub: OpenAIStub;
  let kiln: EmbeddedKiln;
  let base: string;
  let flow: FlowResult;
  let client: TestClient;
  const promptOn = async (model: string) => {
    const p = await client.createPublishedPrompt(flow.token, flow.organizationId, { model, systemPrompt: "Think." });
    return p.prompt.id;
  };
  const run = (promptId: string) =>
    client.post<Loose>(
      `/api/prompts/${promptId}/run`,
      { organizationId: flow.organizationId, variables: {} },
      { token: flow.token },
    );

  beforeAll(async () => {
    stub = await startOpenAIStub({});
    const providers = loadProvidersConfig({
      OPENAI_API_KEY: "sk-test-usage",
      OPENAI_BASE_URL: stub.baseUrl,
      OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
        {
          id: "stub",
          baseUrl: stub.baseUrl,
          models: [
            // Every class priced.
            {
              model: "thinker",
              inputPerMTokUsd: 3,
              outputPerMTokUsd: 15,
              cachedInputPerMTokUsd: 0.3,
              reasoningPerMTokUsd: 20,
            },
            // No cached-input price: cached input is priced at the input price, and the run says so.
            { model: "plain", inputPerMTokUsd: 2, outputPerMTokUsd: 4 },
            // No price at all: the cost is null, never 0.
            { model: "free-or-not" },
          ],
        },
      ]),
      PROVIDER_MAX_RETRIES: "0",
    });
    const started = await startEmbedded({ providers });
    kiln = started.kiln;
    base = started.baseUrl;
    client = createTestClient(base);
    flow = await runIdentityFlow(base, ["prompts:read", "skills:read", "runs:write"]);
  }, 120_000);

  afterAll(async () => {
    await kiln?.close();
    await stub?.close();
  });

  it("GET /api/models shows each class's price: OpenAI's cached-input prices, a compatible model's configured ones", async () => {
    const res = await call(base, "GET", "/api/models", { token: flow.token });
    expect(res.status).toBe(200);
    const byId = new Map<string, Loose>(res.body.data.map((m: Loose) => [m.id, m]));
    expect(byId.get("openai/gpt-4o-mini")?.pricing).toEqual({
      inputPerMTokUsd: 0.15,
      outputPerMTokUsd: 0.6,
      cachedInputPerMTokUsd: 0.075,
    });
    expect(byId.get("openai/gpt-4.1")?.pricing).toMatchObject({ inputPerMTokUsd: 2, cachedInputPerMTokUsd: 0.5 });
    expect(byId.get("stub/thinker")?.pricing).toEqual({
      inputPerMTokUsd: 3,
      outputPerMTokUsd: 15,
      cachedInputPerMTokUsd: 0.3,
      reasoningPerMTokUsd: 20,
    });
    // No class price: absent, the class is priced at the input (or output) price.
    expect(byId.get("stub/plain")?.pricing).toEqual({ inputPerMTokUsd: 2, outputPerMTokUsd: 4 });
  });

  it("stores an OpenAI run's cached and reasoning tokens and prices them at gpt-4o-mini's prices, to the exact figure", async () => {
    const promptId = await promptOn("openai/gpt-4o-mini");
    stub.script(stubReply.text("Done.", { usage: DETAILED }));
    const res = await run(promptId);
    expect(res.status, res.text).toBe(201);
    expect(res.body.usage).toEqual(DETAILED_USAGE);
    // 86 · 0.15 + 1920 · 0.075 + 300 · 0.6 (reasoning at the output price: OpenAI bills it so).
    const expected = costOf({ input: 0.15, cached: 0.075, output: 0.6, reasoning: 0.6 });
    expect(expected).toBeCloseTo(0.0003369, 12);
    expect(res.body.estimatedCostUsd).toBeCloseTo(expected, 15);
    expect(res.body).not.toHaveProperty("costNotes");
    const read = await call(base, "GET", `/api/runs/${res.body.id}`, { token: flow.token });
    expect(read.status).toBe(200);
    expect(read.body.usage).toEqual(DETAILED_USAGE);
    expect(read.body.estimatedCostUsd).toBe(res.body.estimatedCostUsd);
  });

  it("prices a compatible model's classes at its configured prices, reasoning included", async () => {
    const promptId = await promptOn("stub/thinker");
    stub.script(stubReply.text("Done.", { usage: DETAILED }));
    const res = await run(promptId);
    expect(res.status, res.text).toBe(201);
    expect(res.body.usage).toEqual(DETAILED_USAGE);
    // 86 · 3 + 1920 · 0.3 + 108 · 15 + 192 · 20 = 258 + 576 + 1620 + 3840 = 6294 per million.
    expect(res.body.estimatedCostUsd).toBeCloseTo(0.006294, 15);
  });

  it("prices cached input at the input price when the model has no cached price, and says so on the run", async () => {
    const promptId = await promptOn("stub/plain");
    stub.script(stubReply.text("Done.", { usage: DETAILED }));
    const res = await run(promptId);
    expect(res.status, res.text).toBe(201);
    expect(res.body.estimatedCostUsd).toBeCloseTo((2006 * 2 + 300 * 4) / 1_000_000, 15);
    expect(res.body.costNotes).toEqual(["cached_input_priced_as_input"]);
    const read = await call(base, "GET", `/api/runs/${res.body.id}`, { token: flow.token });
    expect(read.body.costNotes).toEqual(["cached_input_priced_as_input"]);
    // Without cached tokens nothing was assumed.
    stub.script(stubReply.text("Done.", { usage: { prompt_tokens: 10, completion_tokens: 5 } }));
    const uncached = await run(promptId);
    expect(uncached.body.usage).toEqual({ inputTokens: 10, outputTokens: 5 });
    expect(uncached.body.estimatedCostUsd).toBeCloseTo((10 * 2 + 5 * 4) / 1_000_000, 15);
    expect(uncached.body).not.toHaveProperty("costNotes");
  });

  it("keeps the cost of an unpriced model null, never 0, with its token classes still recorded", async () => {
    const promptId = await promptOn("stub/free-or-not");
    stub.script(stubReply.text("Done.", { usage: DETAILED }));
    const res = await run(promptId);
    expect(res.status, res.text).toBe(201);
    expect(res.body.usage).toEqual(DETAILED_USAGE);
    expect(res.body.estimatedCostUsd).toBeNull();
    expect(res.body).not.toHaveProperty("costNotes");
  });

  it("sums each class over a skill's steps, and the skill's cost over the steps' own", async () => {
    const first = await promptOn("openai/gpt-4o-mini");
    const second = await promptOn("stub/thinker");
    const skill = await client.createSkill(flow.token, flow.organizationId, { name: `Usage ${Date.now()}` });
    await client.replaceSkillPrompts(flow.token, skill.draftVersionId ?? "", [
      { promptId: first, alias: "one" },
      { promptId: second, alias: "two" },
    ]);
    await client.publishSkill(flow.token, skill.id);
    stub.script(
      stubReply.text("One.", { usage: DETAILED }),
      stubReply.text("Two.", {
        usage: { prompt_tokens: 100, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 0 } },
      }),
    );
    const res = await client.post<Loose>(
      `/api/skills/${skill.id}/run`,
      { organizationId: flow.organizationId, input: {} },
      { token: flow.token },
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body.steps.map((s: Loose) => s.usage)).toEqual([
      DETAILED_USAGE,
      { inputTokens: 100, outputTokens: 10, cachedInputTokens: 0 },
    ]);
    expect(res.body.usage).toEqual({
      inputTokens: 2106,
      outputTokens: 310,
      cachedInputTokens: 1920,
      reasoningTokens: 192,
    });
    const one = costOf({ input: 0.15, cached: 0.075, output: 0.6, reasoning: 0.6 });
    const two = (100 * 3 + 10 * 15) / 1_000_000;
    expect(res.body.steps[0].estimatedCostUsd).toBeCloseTo(one, 15);
    expect(res.body.steps[1].estimatedCostUsd).toBeCloseTo(two, 15);
    expect(res.body.estimatedCostUsd).toBeCloseTo(one + two, 15);
  });

  it("answers /v1/chat/completions with the run's cached and reasoning tokens, plain and streamed", async () => {
    const promptId = await promptOn("openai/gpt-4o-mini");
    const key = await client.createApiKey(flow.token, flow.organizationId, ["prompts:read", "runs:write"]);
    stub.script(stubReply.text("Done.", { usage: DETAILED }));
    const plain = await call(base, "POST", "/v1/chat/completions", {
      headers: { authorization: `Bearer ${key.key}` },
      body: { model: `kiln/${promptId}`, messages: [{ role: "user", content: "Go." }] },
    });
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    const expected = costOf({ input: 0.15, cached: 0.075, output: 0.6, reasoning: 0.6 });
    expect(plain.body.usage).toMatchObject({
      prompt_tokens: 2006,
      completion_tokens: 300,
      total_tokens: 2306,
      prompt_tokens_details: { cached_tokens: 1920 },
      completion_tokens_details: { reasoning_tokens: 192 },
    });
    expect(plain.body.usage.cost_usd).toBeCloseTo(expected, 15);

    stub.script(stubReply.text("Done again.", { usage: DETAILED }));
    const streamed = await fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key.key}` },
      body: JSON.stringify({
        model: `kiln/${promptId}`,
        messages: [{ role: "user", content: "Go." }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    expect(streamed.status).toBe(200);
    const chunks = (await streamed.text())
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => JSON.parse(e.slice("data: ".length)) as Loose);
    const usage = chunks.at(-1)?.usage;
    expect(usage).toMatchObject({
      prompt_tokens_details: { cached_tokens: 1920 },
      completion_tokens_details: { reasoning_tokens: 192 },
    });
    expect(usage.cost_usd).toBeCloseTo(expected, 15);
    // The stub was asked for the stream's usage chunk, and the stored run has the classes.
    expect(stub.requests.at(-1)?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });
});
