import { type AnthropicStub, anthropicReply, startAnthropicStub } from "@kiln/testing/anthropic-stub";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AnthropicProviderOptions, createAnthropicProvider } from "./anthropic-provider.js";
import { type ChatMessage, type ModelRequest, ProviderError } from "./provider.js";
import { createProviderRegistry } from "./provider-registry.js";

const API_KEY = "sk-ant-api03-test0123456789abcdef";
let stub: AnthropicStub;

beforeAll(async () => {
  stub = await startAnthropicStub({ apiKey: API_KEY });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

function provider(options: Partial<AnthropicProviderOptions> = {}) {
  return createAnthropicProvider({
    id: "anthropic",
    apiKey: API_KEY,
    baseUrl: stub.baseUrl,
    timeoutMs: 5_000,
    maxRetries: 2,
    ...options,
  });
}

const MESSAGES: ChatMessage[] = [
  { role: "system", content: "You are terse." },
  { role: "developer", content: "Use metric units." },
  { role: "user", content: "Weather in Paris?" },
];

const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "claude-haiku-4-5",
  messages: MESSAGES,
  ...extra,
});

const WEATHER = {
  name: "weather",
  description: "The weather in a city",
  inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("createAnthropicProvider: requests and answers", () => {
  it("sends the headers, the system at the top level, max_tokens and the sampling settings", async () => {
    stub.script(anthropicReply.text("Sunny, 21 °C.", { usage: { input_tokens: 31, output_tokens: 7 } }));
    const result = await provider().generate(request({ temperature: 0.2, topP: 0.9, stop: ["\n\n"] }));
    expect(result).toEqual({
      text: "Sunny, 21 °C.",
      toolCalls: [],
      usage: { inputTokens: 31, outputTokens: 7, cachedInputTokens: 0, cacheWriteInputTokens: 0 },
      finishReason: "stop",
      provider: "anthropic",
      model: "claude-haiku-4-5",
      retries: 0,
    });
    const [sent] = stub.requests;
    expect(sent?.path).toBe("/v1/messages");
    expect(sent?.headers).toMatchObject({
      "x-api-key": API_KEY,
      "anthropic-version": "2023-06-01",
      "content-type": "application/json",
    });
    expect(sent?.headers.authorization).toBeUndefined();
    expect(sent?.body).toEqual({
      model: "claude-haiku-4-5",
      max_tokens: 8192,
      system: "You are terse.\n\nUse metric units.",
      messages: [{ role: "user", content: [{ type: "text", text: "Weather in Paris?" }] }],
      temperature: 0.2,
      top_p: 0.9,
      stop_sequences: ["\n\n"],
    });
  });

  it("sends maxOutputTokens as max_tokens, another anthropic-version, and a base URL given with /v1", async () => {
    stub.script(anthropicReply.text("ok"));
    await provider({ version: "2023-01-01", baseUrl: `${stub.baseUrl}/v1/` }).generate(
      request({ maxOutputTokens: 300 }),
    );
    expect(stub.requests[0]?.path).toBe("/v1/messages");
    expect(stub.requests[0]?.headers["anthropic-version"]).toBe("2023-01-01");
    expect(stub.requests[0]?.body.max_tokens).toBe(300);
  });

  it("opens a conversation without a user message with the system text as the user turn", async () => {
    stub.script(anthropicReply.text("ok"));
    await provider().generate(request({ messages: [{ role: "system", content: "Write a haiku." }] }));
    expect(stub.requests[0]?.body.system).toBeUndefined();
    expect(stub.requests[0]?.body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Write a haiku." }] },
    ]);
  });

  it("maps the stop reasons", async () => {
    const cases = [
      ["stop_sequence", "stop"],
      ["max_tokens", "length"],
      ["refusal", "content_filter"],
      ["model_context_window_exceeded", "length"],
      ["pause_turn", "other"],
    ] as const;
    for (const [stopReason, finishReason] of cases) {
      stub.script(anthropicReply.text("cut", { stopReason }));
      expect((await provider().generate(request())).finishReason).toBe(finishReason);
    }
  });

  it("counts usage in the normalized classes: Anthropic's input_tokens leaves cache reads and writes out", async () => {
    stub.script(
      anthropicReply.text("cached", {
        usage: {
          input_tokens: 12,
          cache_read_input_tokens: 2000,
          cache_creation_input_tokens: 300,
          output_tokens: 40,
          thinking_tokens: 25,
        },
      }),
    );
    const { usage } = await provider().generate(request());
    expect(usage).toEqual({
      inputTokens: 2312,
      cachedInputTokens: 2000,
      cacheWriteInputTokens: 300,
      outputTokens: 40,
      reasoningTokens: 25,
    });
  });

  it("marks cached system and user messages with cache_control on their last block", async () => {
    stub.script(anthropicReply.text("ok"));
    await provider().generate(
      request({
        messages: [
          { role: "system", content: "A long policy.", cache: true },
          { role: "developer", content: "Be brief." },
          { role: "user", content: "First question", cache: true },
        ],
      }),
    );
    const body = stub.requests[0]?.body;
    expect(body.system).toEqual([
      { type: "text", text: "A long policy.", cache_control: { type: "ephemeral" } },
      { type: "text", text: "Be brief." },
    ]);
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "First question", cache_control: { type: "ephemeral" } }] },
    ]);
  });

  it("sends image parts as base64 and url sources, and refuses an image type Anthropic does not take", async () => {
    stub.script(anthropicReply.text("A cat."));
    const parts = [
      { type: "text" as const, text: "What is this?" },
      { type: "image" as const, url: "data:image/png;base64,iVBORw0KGgo=" },
      { type: "image" as const, url: "https://example.com/cat.jpg", detail: "high" as const },
    ];
    await provider().generate(request({ messages: [{ role: "user", content: "What is this?", parts }] }));
    expect(stub.requests[0]?.body.messages[0].content).toEqual([
      { type: "text", text: "What is this?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
    ]);
    const bmp = { type: "image" as const, url: "data:image/bmp;base64,Qk0=" };
    const error = await provider()
      .generate(request({ messages: [{ role: "user", content: "", parts: [bmp] }] }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toContain("image/bmp");
    expect(stub.requests).toHaveLength(1);
  });

  it("asks for a json_schema answer with structured outputs and parses it", async () => {
    stub.script(anthropicReply.json({ city: "Paris", celsius: 21 }));
    const schema = {
      type: "object",
      properties: { city: { type: "string", minLength: 1 }, celsius: { type: "number" } },
      required: ["city"],
    };
    const result = await provider().generate(
      request({ responseFormat: { type: "json_schema", name: "weather", schema } }),
    );
    expect(result.json).toEqual({ city: "Paris", celsius: 21 });
    expect(result.text).toBe('{"city":"Paris","celsius":21}');
    expect(stub.requests[0]?.body.output_config).toEqual({
      format: {
        type: "json_schema",
        schema: {
          type: "object",
          properties: { city: { type: "string", description: "{minLength: 1}" }, celsius: { type: "number" } },
          required: ["city"],
          additionalProperties: false,
        },
      },
    });
    expect(stub.requests[0]?.body.tools).toBeUndefined();
    stub.script(anthropicReply.text('{"city": "Par', { stopReason: "max_tokens" }));
    const cut = await provider().generate(request({ responseFormat: { type: "json_schema", name: "w", schema } }));
    expect(cut.json).toBeUndefined();
    expect(cut.finishReason).toBe("length");
  });

  it("sends thinking for a token budget, and effort in output_config", async () => {
    stub.script(anthropicReply.text("ok"), anthropicReply.text("ok"));
    await provider().generate(request({ reasoning: { budgetTokens: 2048 } }));
    await provider().generate(request({ reasoning: { effort: "low" } }));
    expect(stub.requests[0]?.body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(stub.requests[0]?.body.max_tokens).toBe(8192 + 2048);
    expect(stub.requests[1]?.body.output_config).toEqual({ effort: "low" });
  });

  it("maps the tool choice", async () => {
    const cases = [
      ["required", { type: "any" }],
      ["none", { type: "none" }],
      [{ name: "weather" }, { type: "tool", name: "weather" }],
      ["auto", { type: "auto" }],
    ] as const;
    for (const [toolChoice, sent] of cases) {
      stub.script(anthropicReply.text("ok"));
      await provider().generate(request({ tools: [WEATHER], toolChoice }));
      expect(stub.requests.at(-1)?.body.tool_choice).toEqual(sent);
    }
    stub.script(anthropicReply.text("ok"), anthropicReply.text("ok"));
    await provider().generate(request({ tools: [WEATHER] }));
    expect(stub.requests.at(-1)?.body.tool_choice).toBeUndefined();
    await provider().generate(request({ tools: [WEATHER], parallelToolCalls: false }));
    expect(stub.requests.at(-1)?.body.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
  });
});

describe("createAnthropicProvider: the tool round trip", () => {
  it("offers tools, reads tool_use blocks, and sends tool_use and tool_result blocks back with the thinking", async () => {
    const thinking = { thinking: "The user wants both cities.", signature: "sig-abc123==" };
    stub.script(
      anthropicReply.toolUse(
        [
          { id: "toolu_01", name: "weather", input: { city: "Paris" } },
          { id: "toolu_02", name: "weather", input: { city: "Rome" } },
        ],
        { thinking, text: "Looking both up." },
      ),
      anthropicReply.text("Paris 21 °C, Rome 25 °C."),
    );
    const first = await provider().generate(request({ tools: [WEATHER], reasoning: { budgetTokens: 1024 } }));
    expect(first.finishReason).toBe("tool_calls");
    expect(first.text).toBe("Looking both up.");
    expect(first.toolCalls).toEqual([
      { id: "toolu_01", name: "weather", input: { city: "Paris" } },
      { id: "toolu_02", name: "weather", input: { city: "Rome" } },
    ]);
    expect(first.reasoning).toEqual({ provider: "anthropic", data: [{ type: "thinking", ...thinking }] });
    expect(stub.requests[0]?.body.tools).toEqual([
      {
        name: "weather",
        description: "The weather in a city",
        input_schema: WEATHER.inputSchema,
      },
    ]);

    const messages: ChatMessage[] = [
      ...MESSAGES,
      { role: "assistant", content: first.text, toolCalls: first.toolCalls, reasoning: first.reasoning },
      { role: "tool", toolCallId: "toolu_01", content: '{"celsius":21}' },
      { role: "tool", toolCallId: "toolu_02", content: '{"celsius":25}' },
    ];
    const second = await provider().generate(
      request({ messages, tools: [WEATHER], reasoning: { budgetTokens: 1024 } }),
    );
    expect(second).toMatchObject({ text: "Paris 21 °C, Rome 25 °C.", finishReason: "stop", toolCalls: [] });
    expect(second.reasoning).toBeUndefined();
    expect(stub.requests[1]?.body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", ...thinking },
          { type: "text", text: "Looking both up." },
          { type: "tool_use", id: "toolu_01", name: "weather", input: { city: "Paris" } },
          { type: "tool_use", id: "toolu_02", name: "weather", input: { city: "Rome" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_01", content: '{"celsius":21}' },
          { type: "tool_result", tool_use_id: "toolu_02", content: '{"celsius":25}' },
        ],
      },
    ]);
  });

  it("leaves out reasoning another provider carried", async () => {
    stub.script(anthropicReply.text("ok"));
    const messages: ChatMessage[] = [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c1", name: "weather", input: {} }],
        reasoning: { provider: "gemini", data: ["x"] },
      },
      { role: "tool", toolCallId: "c1", content: "{}" },
    ];
    await provider().generate(request({ messages, tools: [WEATHER] }));
    expect(stub.requests[0]?.body.messages[1].content).toEqual([
      { type: "tool_use", id: "c1", name: "weather", input: {} },
    ]);
  });
});

describe("the registry", () => {
  it("makes anthropic/* available with a key, with the catalog's prices", async () => {
    const config = { openai: {}, compatible: [], defaultModel: "local/echo", timeoutMs: 1_000, maxRetries: 0 };
    const without = createProviderRegistry(config);
    expect(without.catalog.get("anthropic/claude-sonnet-4-6")?.available).toBe(false);
    const registry = createProviderRegistry({ ...config, anthropic: { apiKey: API_KEY, baseUrl: stub.baseUrl } });
    const model = await registry.resolve("anthropic/claude-haiku-4-5");
    expect(model.provider.id).toBe("anthropic");
    expect(model.entry.pricing).toEqual({
      inputPerMTokUsd: 1,
      outputPerMTokUsd: 5,
      cachedInputPerMTokUsd: 0.1,
      cacheWritePerMTokUsd: 1.25,
    });
    expect(registry.catalog.get("anthropic/claude-sonnet-4-6")?.pricing).toMatchObject({
      inputPerMTokUsd: 3,
      outputPerMTokUsd: 15,
      cachedInputPerMTokUsd: 0.3,
      cacheWritePerMTokUsd: 3.75,
    });
  });
});
