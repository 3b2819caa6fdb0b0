/**
 * A prompt on `gemini/gemini-2.5-flash` through the gateway: the embedded platform configured with
 * GEMINI_API_KEY and GEMINI_BASE_URL (the Gemini stub), a published prompt run over the REST API,
 * and what Gemini received, what the run recorded and what it cost (docs/providers.md "Gemini").
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { type GeminiStub, geminiReply, startGeminiStub } from "@kiln/testing/gemini-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

const API_KEY = "AIza-integration-0123456789";

describe("a prompt run on gemini/* through the gateway", () => {
  let stub: GeminiStub;
  let kiln: EmbeddedKiln;
  let base: string;
  let flow: FlowResult;

  beforeAll(async () => {
    stub = await startGeminiStub({ apiKey: API_KEY });
    const providers = loadProvidersConfig({
      GEMINI_API_KEY: API_KEY,
      GEMINI_BASE_URL: stub.baseUrl,
      PROVIDER_MAX_RETRIES: "1",
    });
    const started = await startEmbedded({ providers });
    kiln = started.kiln;
    base = started.baseUrl;
    flow = await runIdentityFlow(base, ["prompts:read", "runs:write"]);
  });
  afterAll(async () => {
    await kiln?.close();
    await stub?.close();
  });

  it("lists the Gemini models as available with their prices", async () => {
    const api = createTestClient(base);
    const models = await api.get<{ data: { id: string; available: boolean; pricing: Record<string, number> }[] }>(
      "/api/models",
      { token: flow.apiKey },
    );
    expect(models.status, models.text).toBe(200);
    const flash = models.body.data.find((m) => m.id === "gemini/gemini-2.5-flash");
    expect(flash).toMatchObject({ available: true, pricing: { inputPerMTokUsd: 0.3, outputPerMTokUsd: 2.5 } });
  });

  it("runs the prompt on Gemini, retrying its rate limit, and records usage and cost", async () => {
    const api = createTestClient(base);
    const { prompt } = await api.createPublishedPrompt(flow.token, flow.organizationId, {
      model: "gemini/gemini-2.5-flash",
      systemPrompt: "Greet {{name}} briefly.",
      variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    });
    stub.script(
      geminiReply.rateLimited({ retryDelay: "0.05s" }),
      geminiReply.text("Hello, Ada!", {
        usage: { promptTokenCount: 1_000_000, candidatesTokenCount: 100_000, thoughtsTokenCount: 300_000 },
      }),
    );
    const run = await api.post<Record<string, unknown>>(
      `/api/prompts/${prompt.id}/run`,
      { organizationId: flow.organizationId, variables: { name: "Ada" } },
      { token: flow.apiKey },
    );
    expect(run.status, run.text).toBe(201);
    expect(run.body.error, JSON.stringify(stub.requests.map((r) => r.body))).toBeUndefined();
    expect(run.body).toMatchObject({
      status: "succeeded",
      provider: "gemini",
      model: "gemini/gemini-2.5-flash",
      output: { text: "Hello, Ada!" },
      usage: { inputTokens: 1_000_000, outputTokens: 400_000 },
    });
    // 1M input at 0.30 + 0.4M output (thinking included) at 2.50 USD per million.
    expect(run.body.estimatedCostUsd).toBeCloseTo(1.3, 6);
    expect(stub.requests).toHaveLength(2);
    const sent = stub.requests[1];
    expect(sent?.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(sent?.headers["x-goog-api-key"]).toBe(API_KEY);
    // A prompt of instructions alone: Gemini needs a content, so they are the user's turn.
    expect(sent?.body.contents).toEqual([{ role: "user", parts: [{ text: "Greet Ada briefly." }] }]);
  });
});
