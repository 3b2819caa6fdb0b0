import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIProvider, type OpenAIProviderOptions, safeExcerpt } from "./openai-provider.js";
import { type ChatMessage, type ModelRequest, ProviderError } from "./provider.js";

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

function request(extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model: "gpt-4o-mini", messages: MESSAGES, ...extra };
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe("createOpenAIProvider: requests and answers", () => {
  it("reads cached and reasoning tokens from the usage details, as parts of prompt and completion tokens", async () => {
    stub.script(
      stubReply.text("ok", {
        usage: {
          prompt_tokens: 2006,
          completion_tokens: 300,
          prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 192, audio_tokens: 0 },
        },
      }),
      stubReply.text("ok", { usage: { prompt_tokens: 5, completion_tokens: 1 } }),
    );
    const detailed = await provider().generate(request());
    expect(detailed.usage).toEqual({
      inputTokens: 2006,
      outputTokens: 300,
      cachedInputTokens: 1920,
      reasoningTokens: 192,
    });
    // An answer without details (an older compatible server) reports no class it did not count.
    const plain = await provider().generate(request());
    expect(plain.usage).toEqual({ inputTokens: 5, outputTokens: 1 });
  });

  it("sends the messages and settings, and returns text, usage and the finish reason", async () => {
    stub.script(stubReply.text("Sunny, 21 °C.", { usage: { prompt_tokens: 31, completion_tokens: 7 } }));
    const result = await provider().generate(request({ temperature: 0.2, maxOutputTokens: 100 }));
    expect(result).toEqual({
      text: "Sunny, 21 °C.",
      toolCalls: [],
      usage: { inputTokens: 31, outputTokens: 7 },
      finishReason: "stop",
      provider: "openai",
      model: "gpt-4o-mini",
      retries: 0,
    });
    const [sent] = stub.requests;
    expect(sent?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent?.headers).not.toHaveProperty("x-kiln-provider-call");
    expect(sent?.body).toEqual({
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "developer", content: "Use metric units." },
        { role: "user", content: "Weather in Paris?" },
      ],
      temperature: 0.2,
      max_completion_tokens: 100,
    });
  });

  it("sends the tool choice, JSON mode and the caller's sampling settings", async () => {
    stub.script(stubReply.json({ ok: true }));
    const result = await provider().generate(
      request({
        tools: [{ name: "lookup", inputSchema: { type: "object" } }],
        toolChoice: { name: "lookup" },
        parallelToolCalls: false,
        responseFormat: { type: "json_object" },
        stop: ["END"],
        seed: 7,
        topP: 0.5,
        frequencyPenalty: 0.1,
        presencePenalty: -0.1,
      }),
    );
    expect(result.json).toEqual({ ok: true });
    expect(stub.requests[0]?.body).toMatchObject({
      tool_choice: { type: "function", function: { name: "lookup" } },
      parallel_tool_calls: false,
      response_format: { type: "json_object" },
      stop: ["END"],
      seed: 7,
      top_p: 0.5,
      frequency_penalty: 0.1,
      presence_penalty: -0.1,
    });
  });

  it("asks for a json_schema answer (strict: false) and parses it", async () => {
    const schema = { type: "object", properties: { tempC: { type: "number" } }, required: ["tempC"] };
    stub.script(stubReply.json({ tempC: 21 }));
    const result = await provider().generate(
      request({ responseFormat: { type: "json_schema", name: "weather report", schema } }),
    );
    expect(result.json).toEqual({ tempC: 21 });
    expect(result.text).toBe('{"tempC":21}');
    expect(stub.requests[0]?.body.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "weather_report", schema, strict: false },
    });
  });

  it("leaves json out when a json_schema answer is not JSON", async () => {
    stub.script(stubReply.text('{"tempC": 2', { finishReason: "length" }));
    const result = await provider().generate(
      request({ responseFormat: { type: "json_schema", name: "w", schema: { type: "object" } } }),
    );
    expect(result).toMatchObject({ text: '{"tempC": 2', finishReason: "length" });
    expect(result).not.toHaveProperty("json");
  });

  it("round-trips tool calls: tools offered, calls parsed, assistant tool_calls and tool results sent back", async () => {
    const tools = [
      {
        name: "get_weather",
        description: "Current weather",
        inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
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
    const first = await llm.generate(request({ tools }));
    expect(first.finishReason).toBe("tool_calls");
    expect(first.toolCalls).toEqual([
      { id: "call_a", name: "get_weather", input: { city: "Paris" } },
      { id: "call_b", name: "get_time", input: {} },
    ]);
    expect(stub.requests[0]?.body.tools).toEqual([
      {
        type: "function",
        function: { name: "get_weather", description: "Current weather", parameters: tools[0]?.inputSchema },
      },
      { type: "function", function: { name: "get_time", parameters: tools[1]?.inputSchema } },
    ]);

    const second = await llm.generate(
      request({
        tools,
        messages: [
          ...MESSAGES,
          { role: "assistant", content: "", toolCalls: first.toolCalls },
          { role: "tool", toolCallId: "call_a", content: '{"tempC":21}' },
          { role: "tool", toolCallId: "call_b", content: '"12:00"' },
        ],
      }),
    );
    expect(second).toMatchObject({ text: "21 °C at noon.", finishReason: "stop", toolCalls: [] });
    expect(stub.requests[1]?.body.messages.slice(3)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          { id: "call_b", type: "function", function: { name: "get_time", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: '{"tempC":21}' },
      { role: "tool", tool_call_id: "call_b", content: '"12:00"' },
    ]);
  });

  it("fails with provider_error when tool arguments are not JSON", async () => {
    stub.script(stubReply.toolCalls([{ name: "get_weather", arguments: "{city: Paris" }]));
    const error = await failure(provider().generate(request()));
    expect(error.kind).toBe("provider_error");
    expect(error.message).toContain('tool "get_weather"');
  });

  it("sends developer messages as system and max_tokens where a compatible endpoint needs it", async () => {
    stub.script(stubReply.text("ok"));
    await provider({ id: "ollama", developerRole: false, maxTokensParam: "max_tokens" }).generate(
      request({ maxOutputTokens: 50 }),
    );
    const body = stub.requests[0]?.body;
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(["system", "system", "user"]);
    expect(body.max_tokens).toBe(50);
    expect(body).not.toHaveProperty("max_completion_tokens");
  });

  it("sends no Authorization header to a keyless endpoint", async () => {
    const open = await startOpenAIStub();
    try {
      const result = await createOpenAIProvider({
        id: "ollama",
        baseUrl: open.baseUrl,
        timeoutMs: 2_000,
        maxRetries: 0,
      }).generate(request({ model: "llama3.1" }));
      expect(result.text).toBe("Weather in Paris?");
      expect(open.requests[0]?.headers).not.toHaveProperty("authorization");
    } finally {
      await open.close();
    }
  });
});

describe("createOpenAIProvider: retries, deadlines and errors", () => {
  it("retries a 429 after the retry-after-ms it was given, counting the retries", async () => {
    stub.script(...stubReply.times(2, stubReply.rateLimited({ retryAfterMs: 200 })), stubReply.text("ok"));
    const started = performance.now();
    const result = await provider().generate(request());
    expect(performance.now() - started).toBeGreaterThanOrEqual(400);
    expect(result).toMatchObject({ text: "ok", retries: 2 });
    const [a, b, c] = stub.requests;
    expect(b!.atMs - a!.atMs).toBeGreaterThanOrEqual(195);
    expect(c!.atMs - b!.atMs).toBeGreaterThanOrEqual(195);
    expect(stub.requests).toHaveLength(3);
  });

  it("honours Retry-After in seconds", async () => {
    stub.script(stubReply.rateLimited({ retryAfterSeconds: 1 }), stubReply.text("ok"));
    const started = performance.now();
    const result = await provider().generate(request());
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(result.retries).toBe(1);
  });

  it("retries a 500 with the SDK's backoff (0.5 s less up to 25 %) and then succeeds", async () => {
    stub.script(stubReply.serverError(), stubReply.text("ok"));
    const started = performance.now();
    const result = await provider().generate(request());
    // First backoff: 0.5 s less up to 25 % jitter.
    expect(performance.now() - started).toBeGreaterThanOrEqual(370);
    expect(result).toMatchObject({ text: "ok", retries: 1 });
    expect(stub.requests).toHaveLength(2);
  });

  it("takes the request's maxRetries over the configured ones (a model route's target with another after it)", async () => {
    stub.script(stubReply.serverError(), stubReply.text("not asked for"));
    const error = await failure(provider({ maxRetries: 2 }).generate(request({ maxRetries: 0 })));
    expect(error).toMatchObject({ kind: "provider_error", status: 500, retries: 0 });
    expect(stub.requests).toHaveLength(1);
  });

  it("follows x-should-retry: a 400 told to retry is retried, a 503 told not to is not", async () => {
    stub.script(
      stubReply.error(400, { message: "busy", headers: { "x-should-retry": "true", "retry-after-ms": "10" } }),
      stubReply.text("ok"),
    );
    expect(await provider().generate(request())).toMatchObject({ text: "ok", retries: 1 });
    stub.reset();
    stub.script(
      stubReply.error(503, { message: "down", headers: { "x-should-retry": "false" } }),
      stubReply.text("no"),
    );
    const error = await failure(provider().generate(request()));
    expect(error).toMatchObject({ kind: "provider_error", status: 503, retries: 0 });
    expect(stub.requests).toHaveLength(1);
  });

  it("fails with provider_error and status 500 once the retries are used up", async () => {
    stub.script(...stubReply.times(3, stubReply.serverError({ retryAfterMs: 10 })), stubReply.text("too late"));
    const error = await failure(provider().generate(request()));
    expect(error).toMatchObject({ kind: "provider_error", status: 500, retries: 2, provider: "openai" });
    expect(error.message).toBe(
      "openai answered HTTP 500: The server had an error while processing your request. (after 2 retries)",
    );
    expect(stub.requests).toHaveLength(3);
    expect(stub.pending()).toBe(1);
  });

  it("fails with provider_timeout within the deadline when the provider hangs", async () => {
    stub.script(stubReply.hang());
    const started = performance.now();
    const error = await failure(provider().generate(request({ timeoutMs: 300 })));
    const elapsed = performance.now() - started;
    expect(error).toMatchObject({ kind: "provider_timeout", retries: 0 });
    expect(error.message).toBe("openai did not answer within 300 ms");
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1_000);
    expect(stub.requests).toHaveLength(1);
  });

  it("times out on the deadline even while the SDK waits to retry", async () => {
    stub.script(stubReply.serverError(), stubReply.text("too late"));
    const started = performance.now();
    const error = await failure(provider().generate(request({ timeoutMs: 200 })));
    expect(error).toMatchObject({ kind: "provider_timeout" });
    expect(performance.now() - started).toBeLessThan(350); // the SDK's backoff alone is ≥ 375 ms
  });

  it("fails at once when Retry-After reaches past the deadline", async () => {
    stub.script(stubReply.rateLimited({ retryAfterSeconds: 30 }), stubReply.text("too late"));
    const started = performance.now();
    const error = await failure(provider().generate(request({ timeoutMs: 2_000 })));
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(error).toMatchObject({ kind: "provider_error", status: 429, retries: 0 });
    expect(error.message).toBe(
      "openai answered HTTP 429: Rate limit reached; it asked to retry after 30000 ms, past the deadline",
    );
  });

  it("fails with provider_error 401 on a bad API key, not retried, the key never shown", async () => {
    const badKey = "sk-proj-WRONGKEY0123456789";
    const error = await failure(provider({ apiKey: badKey }).generate(request()));
    expect(error).toMatchObject({ kind: "provider_error", status: 401, retries: 0 });
    expect(error.message).toBe("openai answered HTTP 401: Incorrect API key provided: [redacted]");
    expect(error.message).not.toContain("WRONGKEY");
    expect(stub.requests).toHaveLength(1);
  });

  it("shows only a short, single-line excerpt of a raw error body", async () => {
    stub.script({ type: "error", status: 400, body: `<html>\n${"bad request ".repeat(100)}\n</html>` });
    const error = await failure(provider().generate(request()));
    expect(error.status).toBe(400);
    expect(error.message).not.toContain("\n");
    expect(error.message.length).toBeLessThan(260);
  });

  it("fails with provider_error when the endpoint cannot be reached", async () => {
    const port = await freePort();
    const error = await failure(
      provider({ baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 0 }).generate(request()),
    );
    expect(error).toMatchObject({ kind: "provider_error", status: undefined });
    expect(error.message).toBe("could not reach openai (ECONNREFUSED)");
  });

  it("refuses a redirect instead of sending the request again elsewhere", async () => {
    let hits = 0;
    const redirecting = createHttpServer((req, res) => {
      hits++;
      req.resume();
      res.writeHead(307, { location: "/elsewhere" }).end();
    });
    await new Promise<void>((r) => redirecting.listen(0, "127.0.0.1", r));
    const { port } = redirecting.address() as AddressInfo;
    try {
      const error = await failure(
        provider({ baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 0 }).generate(request()),
      );
      expect(error).toMatchObject({ kind: "provider_error" });
      expect(error.message).toBe("could not reach openai (REDIRECT_REFUSED)");
      expect(hits).toBe(1);
    } finally {
      redirecting.closeAllConnections();
      await new Promise((r) => redirecting.close(r));
    }
  });

  it("rejects with the caller's own reason on a cancel, and with provider_timeout on a caller's timeout", async () => {
    stub.script(stubReply.hang(), stubReply.hang());
    const controller = new AbortController();
    const cancelled = provider().generate(request({ signal: controller.signal }));
    setTimeout(() => controller.abort(new Error("run cancelled")), 50);
    await expect(cancelled).rejects.toThrow("run cancelled");

    const error = await failure(provider().generate(request({ signal: AbortSignal.timeout(100) })));
    expect(error).toMatchObject({ kind: "provider_timeout" });
  });
});

describe("safeExcerpt", () => {
  it("removes keys and bearer tokens, flattens whitespace and cuts long text", () => {
    expect(safeExcerpt("key sk-abc123456789 and Bearer eyJhbGciOi.x.y", [])).toBe(
      "key [redacted] and Bearer [redacted]",
    );
    expect(safeExcerpt("the key is hunter2hunter2", ["hunter2hunter2"])).toBe("the key is [redacted]");
    expect(safeExcerpt("a\n\n  b")).toBe("a b");
    expect(safeExcerpt("x".repeat(500))).toHaveLength(201);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
