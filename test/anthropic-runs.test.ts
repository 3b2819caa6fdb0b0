/**
 * A prompt run on `anthropic/<model>` through the gateway of the embedded platform, whose Anthropic
 * provider (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL) talks to the Anthropic stub: the stored run says
 * provider "anthropic", the model, the usage in Kiln's classes (cache reads counted as input) and
 * the tool call, and the stub shows the Messages wire of both turns (system at the top level, the
 * thinking block with its signature sent back before the tool_use, the tool result).
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { estimateCostUsd } from "@kiln/models/catalog";
import {
  type AnthropicReceivedRequest,
  type AnthropicStub,
  anthropicReply,
  startAnthropicStub,
} from "@kiln/testing/anthropic-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

const KEY = "sk-ant-api03-integration-key";
const THINKING = { thinking: "I should look the weather up.", signature: "EqQBCkYIARgCKkB0ZXN0" };

/** First turn: the model calls the prompt's tool; once a tool result is there, it answers. */
function respond(request: AnthropicReceivedRequest) {
  const messages: { content: unknown }[] = request.body.messages;
  const answered = messages.some(
    (m) => Array.isArray(m.content) && m.content.some((b: { type?: string }) => b.type === "tool_result"),
  );
  if (answered) {
    return anthropicReply.text("It is 21 °C in Paris.", {
      usage: { input_tokens: 80, cache_read_input_tokens: 1000, cache_creation_input_tokens: 0, output_tokens: 12 },
    });
  }
  const tool = request.body.tools?.[0]?.name ?? "missing";
  return anthropicReply.toolUse([{ id: "toolu_int_1", name: tool, input: { city: "Paris" } }], {
    thinking: THINKING,
    usage: { input_tokens: 50, cache_read_input_tokens: 0, cache_creation_input_tokens: 1000, output_tokens: 20 },
  });
}

describe("a prompt run on anthropic/claude-haiku-4-5", () => {
  let stub: AnthropicStub;
  let kiln: EmbeddedKiln;
  let base: string;
  let flow: FlowResult;
  let promptId: string;

  beforeAll(async () => {
    stub = await startAnthropicStub({ apiKey: KEY, respond });
    const providers = loadProvidersConfig({
      ANTHROPIC_API_KEY: KEY,
      ANTHROPIC_BASE_URL: stub.baseUrl,
      PROVIDER_MAX_RETRIES: "2",
    });
    const started = await startEmbedded({ providers });
    kiln = started.kiln;
    base = started.baseUrl;
    flow = await runIdentityFlow(base, ["prompts:read", "runs:write", "runs:read"]);
    const client = createTestClient(base);
    const tool = await client.createTool(flow.token, flow.organizationId, {
      name: "Weather",
      config: { result: { temperatureC: 21 } },
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    });
    const p = await client.createPublishedPrompt(flow.token, flow.organizationId, {
      model: "anthropic/claude-haiku-4-5",
      systemPrompt: "You report the weather for {{city}}.",
      variablesSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      tools: [tool.id],
    });
    promptId = p.prompt.id;
  }, 120_000);

  afterAll(async () => {
    await kiln?.close();
    await stub?.close();
  });

  it("lists the Claude models as available, with their cache prices", async () => {
    const models = await call(base, "GET", "/api/models", { token: flow.token });
    expect(models.status).toBe(200);
    const haiku = models.body.data.find((m: { id: string }) => m.id === "anthropic/claude-haiku-4-5");
    expect(haiku).toMatchObject({ provider: "anthropic", model: "claude-haiku-4-5", available: true });
    expect(haiku.pricing).toMatchObject({ inputPerMTokUsd: 1, outputPerMTokUsd: 5 });
  });

  it("runs the prompt through a 529, a tool call and the answer, and stores the run", async () => {
    stub.reset();
    stub.script(anthropicReply.overloaded({ retryAfterSeconds: 0 }));
    const res = await call(base, "POST", `/api/prompts/${promptId}/run`, {
      token: flow.token,
      body: { organizationId: flow.organizationId, variables: { city: "Paris" } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      status: "succeeded",
      provider: "anthropic",
      model: "anthropic/claude-haiku-4-5",
      output: { text: "It is 21 °C in Paris." },
      toolCallCount: 1,
      usage: { inputTokens: 50 + 1000 + 80 + 1000, outputTokens: 20 + 12 },
    });
    const [entry] = (await call(base, "GET", "/api/models", { token: flow.token })).body.data.filter(
      (m: { id: string }) => m.id === "anthropic/claude-haiku-4-5",
    );
    expect(res.body.estimatedCostUsd).toBeCloseTo(estimateCostUsd(entry.pricing, res.body.usage) ?? Number.NaN, 12);
    expect(res.body.toolCalls).toHaveLength(1);
    expect(res.body.toolCalls[0]).toMatchObject({ input: { city: "Paris" }, output: { temperatureC: 21 } });

    const read = await call(base, "GET", `/api/runs/${res.body.id}`, { token: flow.token });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      id: res.body.id,
      provider: "anthropic",
      model: "anthropic/claude-haiku-4-5",
      usage: res.body.usage,
      toolCalls: res.body.toolCalls,
    });

    // What Anthropic received: the 529'd attempt, its retry, and the second turn.
    expect(stub.requests).toHaveLength(3);
    const [, first, second] = stub.requests;
    expect(first?.headers["x-api-key"]).toBe(KEY);
    // The prompt has no user message: its system text opens the conversation as the user turn.
    const opening = { role: "user", content: [{ type: "text", text: "You report the weather for Paris." }] };
    expect(first?.body).toMatchObject({ model: "claude-haiku-4-5", messages: [opening] });
    const toolKey = first?.body.tools[0].name;
    expect(res.body.toolCalls[0].toolKey).toBe(toolKey);
    expect(second?.body.messages).toEqual([
      opening,
      {
        role: "assistant",
        content: [
          { type: "thinking", ...THINKING },
          { type: "tool_use", id: "toolu_int_1", name: toolKey, input: { city: "Paris" } },
        ],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_int_1", content: expect.stringContaining("21") }],
      },
    ]);
  });
});
