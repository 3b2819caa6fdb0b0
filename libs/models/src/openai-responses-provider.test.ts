/**
 * The OpenAI provider on the Responses API, against the OpenAI stub's `POST /v1/responses`: which
 * models go there, the request (input items, tools, tool round trip, structured output, images,
 * reasoning, store: false) and the answer (text, tool calls, usage classes, finish reasons),
 * plain and streamed. Failures are in openai-responses-failures.test.ts.
 */
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIProvider, type OpenAIProviderOptions } from "./openai-provider.js";
import { isResponsesOnlyModel, openAIApiOf } from "./openai-responses-models.js";
import type { ChatMessage, ModelDelta, ModelRequest } from "./provider.js";

const API_KEY = "sk-test-0123456789abcdef";
let stub: OpenAIStub;

beforeAll(async () => {
  stub = await startOpenAIStub({ apiKey: API_KEY });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

function provider(options: Partial<OpenAIProviderOptions> = {}) {
  return createOpenAIProvider({
    id: "openai",
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
  model: "o3-pro",
  messages: MESSAGES,
  ...extra,
});

const USAGE = {
  prompt_tokens: 2006,
  completion_tokens: 300,
  prompt_tokens_details: { cached_tokens: 1920, cache_write_tokens: 64 },
  completion_tokens_details: { reasoning_tokens: 192 },
};

describe("which OpenAI API a model is called through", () => {
  it("knows OpenAI's Responses-only models and their dated snapshots, and nothing else", () => {
    for (const model of [
      "o3-pro",
      "o3-pro-2025-06-10",
      "o1-pro",
      "codex-mini-latest",
      "gpt-5-codex",
      "computer-use-preview",
    ])
      expect(isResponsesOnlyModel(model), model).toBe(true);
    for (const model of ["gpt-4o", "o3", "gpt-5", "o3-pro-mini", "gpt-5-codex-x"])
      expect(isResponsesOnlyModel(model), model).toBe(false);
  });

  it("takes the model's own api first, then the table where it applies, else Chat Completions", () => {
    expect(openAIApiOf("gpt-4o")).toBe("chat_completions");
    expect(openAIApiOf("gpt-4o", { "gpt-4o": "responses" })).toBe("responses");
    expect(openAIApiOf("o3-pro")).toBe("responses");
    expect(openAIApiOf("o3-pro", { "o3-pro": "chat_completions" })).toBe("chat_completions");
    expect(openAIApiOf("o3-pro", {}, false)).toBe("chat_completions");
  });

  it("calls a Responses-only model on /responses and any other on /chat/completions", async () => {
    stub.script(stubReply.text("a"), stubReply.text("b"), stubReply.text("c"));
    const llm = provider({ apis: { "gpt-4.1": "responses" } });
    await llm.generate(request({ model: "o3-pro" }));
    await llm.generate(request({ model: "gpt-4o-mini" }));
    await llm.generate(request({ model: "gpt-4.1" }));
    expect(stub.requests.map((r) => r.path)).toEqual(["/v1/responses", "/v1/chat/completions", "/v1/responses"]);
  });

  it("leaves a compatible endpoint's models on Chat Completions unless they say responses", async () => {
    stub.script(stubReply.text("a"), stubReply.text("b"));
    const llm = provider({ id: "proxy", responsesTable: false, apis: { "my-codex": "responses" } });
    await llm.generate(request({ model: "o3-pro" }));
    await llm.generate(request({ model: "my-codex" }));
    expect(stub.requests.map((r) => r.path)).toEqual(["/v1/chat/completions", "/v1/responses"]);
    stub.script(stubReply.text("c"));
    await provider({ id: "proxy", developerRole: false, apis: { "my-codex": "responses" } }).generate(
      request({ model: "my-codex" }),
    );
    // An endpoint without the developer role gets developer messages as system ones, as on Chat Completions.
    expect(stub.requests[2]?.body.input.map((m: { role: string }) => m.role)).toEqual(["system", "system", "user"]);
  });
});

describe("the Responses API: requests and answers", () => {
  it("sends the messages as input items with store: false, and returns text, usage and the finish reason", async () => {
    stub.script(stubReply.text("Sunny, 21 °C.", { usage: { prompt_tokens: 31, completion_tokens: 7 } }));
    const result = await provider().generate(request({ maxOutputTokens: 100, temperature: 0.2, topP: 0.5 }));
    expect(result).toEqual({
      text: "Sunny, 21 °C.",
      toolCalls: [],
      // OpenAI sends every detail, 0 when there was none: 0 is "none", not "unknown".
      usage: { inputTokens: 31, outputTokens: 7, cachedInputTokens: 0, cacheWriteInputTokens: 0, reasoningTokens: 0 },
      finishReason: "stop",
      provider: "openai",
      model: "o3-pro",
      retries: 0,
    });
    const [sent] = stub.requests;
    expect(sent?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    // o3-pro reasons: it refuses temperature and top_p, which are left out.
    expect(sent?.body).toEqual({
      model: "o3-pro",
      input: [
        { role: "system", content: "You are terse." },
        { role: "developer", content: "Use metric units." },
        { role: "user", content: "Weather in Paris?" },
      ],
      store: false,
      max_output_tokens: 100,
    });
  });

  it("sends temperature and top_p to a model that takes them, and the reasoning effort (or a budget's nearest)", async () => {
    stub.script(stubReply.text("a"), stubReply.text("b"), stubReply.text("c"));
    const llm = provider({ apis: { "gpt-4.1": "responses" } });
    await llm.generate(request({ model: "gpt-4.1", temperature: 0.2, topP: 0.5 }));
    await llm.generate(request({ reasoning: { effort: "high" } }));
    await llm.generate(request({ reasoning: { budgetTokens: 4000 } }));
    expect(stub.requests[0]?.body).toMatchObject({ temperature: 0.2, top_p: 0.5 });
    expect(stub.requests[1]?.body.reasoning).toEqual({ effort: "high" });
    expect(stub.requests[2]?.body.reasoning).toEqual({ effort: "medium" });
  });

  it("maps every token class: input includes cached and cache-written, output includes reasoning, the reasoning item is not text", async () => {
    stub.script(stubReply.text("ok", { usage: USAGE }));
    const result = await provider().generate(request());
    expect(result.usage).toEqual({
      inputTokens: 2006,
      outputTokens: 300,
      cachedInputTokens: 1920,
      cacheWriteInputTokens: 64,
      reasoningTokens: 192,
    });
    expect(result.text).toBe("ok");
    // One mapping: Chat Completions' prompt_tokens_details and completion_tokens_details give the same classes.
    stub.script(stubReply.text("ok", { usage: USAGE }));
    const chat = await provider().generate(request({ model: "gpt-4o-mini" }));
    expect(stub.requests[1]?.path).toBe("/v1/chat/completions");
    expect(chat.usage).toEqual(result.usage);
  });

  it("asks for a json_schema answer (strict: false) in text.format and parses it", async () => {
    const schema = { type: "object", properties: { tempC: { type: "number" } }, required: ["tempC"] };
    stub.script(stubReply.json({ tempC: 21 }), stubReply.json({ any: 1 }));
    const result = await provider().generate(
      request({ responseFormat: { type: "json_schema", name: "weather report", schema } }),
    );
    expect(result).toMatchObject({ json: { tempC: 21 }, text: '{"tempC":21}' });
    expect(stub.requests[0]?.body.text).toEqual({
      format: { type: "json_schema", name: "weather_report", schema, strict: false },
    });
    await provider().generate(request({ responseFormat: { type: "json_object" } }));
    expect(stub.requests[1]?.body.text).toEqual({ format: { type: "json_object" } });
  });

  it("sends image parts as input_image with their detail", async () => {
    stub.script(stubReply.text("A kiln."));
    const url = "data:image/png;base64,iVBORw0KGgo=";
    await provider().generate(
      request({
        messages: [
          {
            role: "user",
            content: "What is this?",
            parts: [
              { type: "text", text: "What is this?" },
              { type: "image", url },
              { type: "image", url: "https://example.com/k.png", detail: "low" },
            ],
          },
        ],
      }),
    );
    expect(stub.requests[0]?.body.input).toEqual([
      {
        role: "user",
        content: [
          { type: "input_text", text: "What is this?" },
          { type: "input_image", image_url: url, detail: "auto" },
          { type: "input_image", image_url: "https://example.com/k.png", detail: "low" },
        ],
      },
    ]);
  });

  it("round-trips tool calls: function tools offered, function_call items parsed, call_id echoed with the outputs", async () => {
    const tools = [
      {
        name: "get_weather",
        description: "Current weather",
        inputSchema: { type: "object", properties: { city: { type: "string" } } },
      },
      { name: "get_time", inputSchema: { type: "object", properties: {} } },
    ];
    stub.script(
      stubReply.toolCalls([
        { id: "call_a", name: "get_weather", arguments: { city: "Paris" } },
        { id: "call_b", name: "get_time", arguments: "" },
      ]),
      stubReply.text("21 °C at noon."),
    );
    const llm = provider();
    const first = await llm.generate(request({ tools, toolChoice: "required", parallelToolCalls: true }));
    expect(first.finishReason).toBe("tool_calls");
    expect(first.toolCalls).toEqual([
      { id: "call_a", name: "get_weather", input: { city: "Paris" } },
      { id: "call_b", name: "get_time", input: {} },
    ]);
    expect(stub.requests[0]?.body).toMatchObject({
      tools: [
        {
          type: "function",
          name: "get_weather",
          description: "Current weather",
          parameters: tools[0]?.inputSchema,
          strict: false,
        },
        { type: "function", name: "get_time", parameters: tools[1]?.inputSchema, strict: false },
      ],
      tool_choice: "required",
      parallel_tool_calls: true,
    });

    const second = await llm.generate(
      request({
        tools,
        toolChoice: { name: "get_time" },
        messages: [
          ...MESSAGES,
          { role: "assistant", content: "Checking.", toolCalls: first.toolCalls },
          { role: "tool", toolCallId: "call_a", content: '{"tempC":21}' },
          { role: "tool", toolCallId: "call_b", content: '"12:00"' },
        ],
      }),
    );
    expect(second).toMatchObject({ text: "21 °C at noon.", finishReason: "stop", toolCalls: [] });
    expect(stub.requests[1]?.body.tool_choice).toEqual({ type: "function", name: "get_time" });
    expect(stub.requests[1]?.body.input.slice(3)).toEqual([
      { role: "assistant", content: "Checking." },
      { type: "function_call", call_id: "call_a", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "function_call", call_id: "call_b", name: "get_time", arguments: "{}" },
      { type: "function_call_output", call_id: "call_a", output: '{"tempC":21}' },
      { type: "function_call_output", call_id: "call_b", output: '"12:00"' },
    ]);
    expect(stub.requests[1]?.body).not.toHaveProperty("previous_response_id");
  });

  it("reads an incomplete response's reason as the finish reason: max_output_tokens is length", async () => {
    stub.script(
      stubReply.text('{"tempC": 2', { finishReason: "length" }),
      stubReply.text("", { finishReason: "content_filter" }),
    );
    const cut = await provider().generate(
      request({ responseFormat: { type: "json_schema", name: "w", schema: { type: "object" } } }),
    );
    expect(cut).toMatchObject({ text: '{"tempC": 2', finishReason: "length" });
    expect(cut).not.toHaveProperty("json");
    expect(await provider().generate(request())).toMatchObject({ text: "", finishReason: "content_filter" });
  });
});

describe("the Responses API: streaming", () => {
  it("hands on text as it arrives and resolves to the whole turn with its usage", async () => {
    stub.script(stubReply.text("Sunny and warm today.", { usage: USAGE, chunkDelayMs: 5 }));
    const deltas: ModelDelta[] = [];
    const result = await provider().generate(request({ onDelta: (d) => deltas.push(d) }));
    expect(deltas).toEqual([
      { type: "text", text: "Sunny " },
      { type: "text", text: "and " },
      { type: "text", text: "warm " },
      { type: "text", text: "today." },
    ]);
    expect(result).toMatchObject({
      text: "Sunny and warm today.",
      finishReason: "stop",
      usage: {
        inputTokens: 2006,
        outputTokens: 300,
        cachedInputTokens: 1920,
        cacheWriteInputTokens: 64,
        reasoningTokens: 192,
      },
    });
    expect(stub.requests[0]?.body).toMatchObject({ stream: true, store: false });
    expect(stub.requests[0]?.headers.accept).toBe("text/event-stream");
  });

  it("hands on each function call's id and name, then its arguments, indexed among the calls", async () => {
    stub.script(
      stubReply.toolCalls(
        [
          { id: "call_a", name: "get_weather", arguments: { city: "Paris" } },
          { id: "call_b", name: "get_time", arguments: {} },
        ],
        { usage: USAGE },
      ),
    );
    const deltas: ModelDelta[] = [];
    const result = await provider().generate(request({ onDelta: (d) => deltas.push(d) }));
    expect(deltas).toEqual([
      { type: "tool_call", index: 0, id: "call_a", name: "get_weather", arguments: "" },
      { type: "tool_call", index: 0, arguments: '{"city":' },
      { type: "tool_call", index: 0, arguments: '"Paris"}' },
      { type: "tool_call", index: 1, id: "call_b", name: "get_time", arguments: "" },
      { type: "tool_call", index: 1, arguments: "{" },
      { type: "tool_call", index: 1, arguments: "}" },
    ]);
    expect(result.toolCalls).toEqual([
      { id: "call_a", name: "get_weather", input: { city: "Paris" } },
      { id: "call_b", name: "get_time", input: {} },
    ]);
    expect(result.finishReason).toBe("tool_calls");
  });

  it("ends a streamed incomplete response with finish reason length", async () => {
    stub.script(stubReply.text("cut sho", { finishReason: "length" }));
    const result = await provider().generate(request({ onDelta: () => {} }));
    expect(result).toMatchObject({ text: "cut sho", finishReason: "length" });
  });
});
