import { DomainError } from "@kiln/kit/errors";
import { type GeminiStub, geminiReply, startGeminiStub } from "@kiln/testing/gemini-stub";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createGeminiProvider } from "./gemini-provider.js";
import { MADE_UP_CALL_ID } from "./gemini-wire.js";
import {
  type ChatMessage,
  type ModelDelta,
  type ModelRequest,
  ProviderError,
  type RemoteProviderOptions,
} from "./provider.js";

const API_KEY = "AIza-test-0123456789abcdef";
let stub: GeminiStub;

beforeAll(async () => {
  stub = await startGeminiStub({ apiKey: API_KEY });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

function provider(options: Partial<RemoteProviderOptions> = {}) {
  return createGeminiProvider({
    id: "gemini",
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
  model: "gemini-2.5-flash",
  messages: MESSAGES,
  ...extra,
});

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe("createGeminiProvider: requests and answers", () => {
  it("sends system instructions, contents and settings, and returns text, usage and the finish reason", async () => {
    stub.script(geminiReply.text("Sunny, 21 °C.", { usage: { promptTokenCount: 31, candidatesTokenCount: 7 } }));
    const result = await provider().generate(
      request({
        temperature: 0.2,
        maxOutputTokens: 100,
        topP: 0.9,
        stop: ["END"],
        seed: 3,
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
      }),
    );
    expect(result).toEqual({
      text: "Sunny, 21 °C.",
      toolCalls: [],
      usage: { inputTokens: 31, outputTokens: 7 },
      finishReason: "stop",
      provider: "gemini",
      model: "gemini-2.5-flash",
      retries: 0,
    });
    const [sent] = stub.requests;
    expect(sent?.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(sent?.headers["x-goog-api-key"]).toBe(API_KEY);
    expect(sent?.body).toEqual({
      systemInstruction: { parts: [{ text: "You are terse." }, { text: "Use metric units." }] },
      contents: [{ role: "user", parts: [{ text: "Weather in Paris?" }] }],
      generationConfig: {
        temperature: 0.2,
        maxOutputTokens: 100,
        topP: 0.9,
        stopSequences: ["END"],
        seed: 3,
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
      },
    });
  });

  it("sends a conversation of instructions alone as the user's turn (Gemini needs a content)", async () => {
    stub.script(geminiReply.text("Hello."));
    await provider().generate(request({ messages: [{ role: "system", content: "Say hello." }] }));
    expect(stub.requests[0]?.body).toEqual({ contents: [{ role: "user", parts: [{ text: "Say hello." }] }] });
  });

  it("normalizes usage: cached tokens are part of the prompt, thoughts are output outside candidates", async () => {
    stub.script(
      geminiReply.text("ok", {
        usage: {
          promptTokenCount: 1000,
          cachedContentTokenCount: 600,
          candidatesTokenCount: 50,
          thoughtsTokenCount: 200,
        },
      }),
    );
    const { usage } = await provider().generate(request());
    expect(usage).toEqual({ inputTokens: 1000, cachedInputTokens: 600, outputTokens: 250, reasoningTokens: 200 });
  });

  it("maps the reasoning budget (or an effort) to thinkingConfig, and leaves thought summaries out of the text", async () => {
    stub.script(geminiReply.text("42", { thought: "Let me think." }), geminiReply.text("x"));
    const result = await provider().generate(request({ reasoning: { budgetTokens: 2048 } }));
    expect(result.text).toBe("42");
    expect(stub.requests[0]?.body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 2048 } });
    await provider().generate(request({ reasoning: { effort: "low" } }));
    expect(stub.requests[1]?.body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 1024 } });
  });

  it("asks for JSON with the schema in Gemini's subset, and parses the answer", async () => {
    stub.script(geminiReply.json({ tempC: 21, sky: "clear" }));
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        tempC: { type: "number", exclusiveMinimum: -300 },
        sky: { oneOf: [{ const: "clear" }, { $ref: "#/definitions/Sky" }] },
      },
      definitions: { Sky: { type: "string", examples: ["cloudy"] } },
      required: ["tempC"],
    };
    const result = await provider().generate(request({ responseFormat: { type: "json_schema", name: "w", schema } }));
    expect(result.json).toEqual({ tempC: 21, sky: "clear" });
    expect(stub.requests[0]?.body.generationConfig).toEqual({
      responseMimeType: "application/json",
      responseJsonSchema: {
        type: "object",
        properties: { tempC: { type: "number" }, sky: { anyOf: [{ enum: ["clear"] }, { $ref: "#/$defs/Sky" }] } },
        $defs: { Sky: { type: "string" } },
        required: ["tempC"],
      },
    });
  });

  it("sends images as inline data or Files API URIs, and refuses other URLs without a request", async () => {
    stub.script(geminiReply.text("a cat"));
    const parts = (url: string): ChatMessage[] => [
      {
        role: "user",
        content: "What is it?",
        parts: [
          { type: "text", text: "What is it?" },
          { type: "image", url },
        ],
      },
    ];
    const files = "https://generativelanguage.googleapis.com/v1beta/files/abc123";
    await provider().generate(request({ messages: [...parts("data:image/png;base64,iVBORw0KGgo="), ...parts(files)] }));
    expect(stub.requests[0]?.body.contents).toEqual([
      {
        role: "user",
        parts: [
          { text: "What is it?" },
          { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
          { text: "What is it?" },
          { fileData: { fileUri: files } },
        ],
      },
    ]);
    const refused = await provider()
      .generate(request({ messages: parts("https://example.com/cat.png") }))
      .catch((e) => e);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).not.toBeInstanceOf(ProviderError);
    expect((refused as DomainError).kind).toBe("invalid_argument");
    expect(stub.requests).toHaveLength(1);
  });

  it("maps finish reasons and a blocked prompt", async () => {
    stub.script(
      geminiReply.text("cut", { finishReason: "MAX_TOKENS" }),
      geminiReply.text("", { finishReason: "SAFETY" }),
      geminiReply.text("", { finishReason: "RECITATION" }),
      geminiReply.blocked("PROHIBITED_CONTENT"),
      geminiReply.text("?", { finishReason: "MALFORMED_FUNCTION_CALL" }),
    );
    const reasons = [];
    for (let i = 0; i < 5; i++) reasons.push((await provider().generate(request())).finishReason);
    expect(reasons).toEqual(["length", "content_filter", "content_filter", "content_filter", "other"]);
  });
});

describe("createGeminiProvider: function calling", () => {
  const tools = [
    {
      name: "lookup",
      description: "Looks up weather",
      inputSchema: { type: "object", properties: { city: { type: "string" } } },
    },
  ];

  it("declares tools and the calling mode", async () => {
    const modes = [];
    for (const toolChoice of ["auto", "none", "required", { name: "lookup" }] as const) {
      stub.script(geminiReply.text("x"));
      await provider().generate(request({ tools, toolChoice }));
      modes.push(stub.requests.at(-1)?.body.toolConfig.functionCallingConfig);
    }
    expect(modes).toEqual([
      { mode: "AUTO" },
      { mode: "NONE" },
      { mode: "ANY" },
      { mode: "ANY", allowedFunctionNames: ["lookup"] },
    ]);
    expect(stub.requests[0]?.body.tools).toEqual([
      {
        functionDeclarations: [
          { name: "lookup", description: "Looks up weather", parametersJsonSchema: tools[0]?.inputSchema },
        ],
      },
    ]);
  });

  it("gives id-less calls stable ids of their own and maps the results back by name, signatures included", async () => {
    stub.script(
      geminiReply.calls([
        { name: "lookup", args: { city: "Paris" }, thoughtSignature: "c2lnLTE=" },
        { name: "lookup", args: { city: "Rome" } },
      ]),
      geminiReply.text("Paris 21, Rome 25"),
    );
    const gemini = provider();
    const first = await gemini.generate(request({ tools }));
    expect(first.finishReason).toBe("tool_calls");
    expect(first.toolCalls.map((c) => [c.name, c.input])).toEqual([
      ["lookup", { city: "Paris" }],
      ["lookup", { city: "Rome" }],
    ]);
    const [paris, rome] = first.toolCalls;
    expect(paris?.id.startsWith(MADE_UP_CALL_ID)).toBe(true);
    expect(paris?.id).not.toBe(rome?.id);
    const second = await gemini.generate(
      request({
        tools,
        messages: [
          ...MESSAGES,
          { role: "assistant", content: "", toolCalls: first.toolCalls },
          { role: "tool", toolCallId: rome?.id ?? "", content: '{"tempC":25}' },
          { role: "tool", toolCallId: paris?.id ?? "", content: "21 degrees" },
        ],
      }),
    );
    expect(second.text).toBe("Paris 21, Rome 25");
    expect(stub.requests[1]?.body.contents.slice(1)).toEqual([
      {
        role: "model",
        parts: [
          { functionCall: { name: "lookup", args: { city: "Paris" } }, thoughtSignature: "c2lnLTE=" },
          { functionCall: { name: "lookup", args: { city: "Rome" } } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "lookup", response: { tempC: 25 } } },
          { functionResponse: { name: "lookup", response: { output: "21 degrees" } } },
        ],
      },
    ]);
  });

  it("keeps an id Gemini sent and sends it back", async () => {
    stub.script(geminiReply.calls([{ name: "lookup", args: {}, id: "fc-7" }]), geminiReply.text("done"));
    const first = await provider().generate(request({ tools }));
    expect(first.toolCalls[0]?.id).toBe("fc-7");
    await provider().generate(
      request({
        messages: [
          ...MESSAGES,
          { role: "assistant", content: "", toolCalls: first.toolCalls },
          { role: "tool", toolCallId: "fc-7", content: "{}" },
        ],
      }),
    );
    expect(stub.requests[1]?.body.contents.slice(1)).toEqual([
      { role: "model", parts: [{ functionCall: { name: "lookup", args: {}, id: "fc-7" } }] },
      { role: "user", parts: [{ functionResponse: { name: "lookup", response: {}, id: "fc-7" } }] },
    ]);
  });

  it("refuses a tool result that answers no call of the conversation", async () => {
    const refused = await provider()
      .generate(request({ messages: [...MESSAGES, { role: "tool", toolCallId: "nope", content: "{}" }] }))
      .catch((e) => e);
    expect((refused as DomainError).kind).toBe("invalid_argument");
    expect(stub.requests).toHaveLength(0);
  });
});

describe("createGeminiProvider: streaming", () => {
  it("hands on text pieces and calls as they arrive, and resolves to the whole turn with the last usage", async () => {
    stub.script(
      geminiReply.text("Sunny and warm.", {
        usage: { promptTokenCount: 9, candidatesTokenCount: 3, thoughtsTokenCount: 4 },
      }),
    );
    const deltas: ModelDelta[] = [];
    const result = await provider().generate(request({ onDelta: (d) => deltas.push(d) }));
    expect(deltas).toEqual([
      { type: "text", text: "Sunny " },
      { type: "text", text: "and " },
      { type: "text", text: "warm." },
    ]);
    expect(result).toMatchObject({
      text: "Sunny and warm.",
      finishReason: "stop",
      usage: { inputTokens: 9, outputTokens: 7, reasoningTokens: 4 },
    });
    expect(stub.requests[0]?.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent");
    expect(stub.requests[0]?.query).toEqual({ alt: "sse" });
  });

  it("streams function calls with the ids the result carries", async () => {
    stub.script(geminiReply.calls([{ name: "lookup", args: { city: "Oslo" } }], { text: "Checking." }));
    const deltas: ModelDelta[] = [];
    const result = await provider().generate(request({ onDelta: (d) => deltas.push(d) }));
    expect(result.toolCalls).toHaveLength(1);
    expect(deltas).toEqual([
      { type: "text", text: "Checking." },
      { type: "tool_call", index: 0, id: result.toolCalls[0]?.id, name: "lookup", arguments: '{"city":"Oslo"}' },
    ]);
    expect(result.text).toBe("Checking.");
  });

  it("fails a stream that breaks off, without retrying it", async () => {
    stub.script(geminiReply.text("one two three", { breakAfterEvents: 2 }));
    const deltas: ModelDelta[] = [];
    const error = await failure(provider().generate(request({ onDelta: (d) => deltas.push(d) })));
    expect(error.kind).toBe("provider_error");
    expect(deltas).toEqual([
      { type: "text", text: "one " },
      { type: "text", text: "two " },
    ]);
    expect(stub.requests).toHaveLength(1);
  });
});

describe("createGeminiProvider: failures", () => {
  it("does not retry 400, 401 or 403, and shows Google's message without the key", async () => {
    const wrong = await failure(provider({ apiKey: "AIza-wrong-key-000" }).generate(request()));
    expect(wrong).toMatchObject({ kind: "provider_error", status: 400, retries: 0 });
    expect(wrong.message).toContain("API key not valid");
    const missing = await failure(provider({ apiKey: undefined }).generate(request()));
    expect(missing).toMatchObject({ status: 403, retries: 0 });
    stub.script(geminiReply.error(401, "Request had invalid authentication credentials."));
    expect(await failure(provider().generate(request()))).toMatchObject({ status: 401, retries: 0 });
    expect(stub.requests).toHaveLength(3);
  });

  it("retries 429 as its RetryInfo asks, and 500/503 with the backoff", async () => {
    stub.script(geminiReply.rateLimited({ retryDelay: "0.2s" }), geminiReply.unavailable(), geminiReply.text("ok"));
    const started = Date.now();
    const result = await provider().generate(request());
    expect(result).toMatchObject({ text: "ok", retries: 2 });
    expect(stub.requests[1]!.atMs - stub.requests[0]!.atMs).toBeGreaterThanOrEqual(190);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("honours a Retry-After header, and gives up after maxRetries with the last status", async () => {
    stub.script(
      ...geminiReply.times(
        3,
        geminiReply.error(500, "Internal error encountered.", { headers: { "retry-after": "0.05" } }),
      ),
    );
    const error = await failure(provider().generate(request()));
    expect(error).toMatchObject({ status: 500, retries: 2, retryAfterMs: 50 });
    expect(error.message).toContain("after 2 retries");
  });

  it("fails at once when the asked wait is past the deadline, saying how long it asked for", async () => {
    stub.script(geminiReply.rateLimited({ retryDelay: "30s" }));
    const error = await failure(provider({ timeoutMs: 1_000 }).generate(request()));
    expect(error).toMatchObject({ status: 429, retries: 0, retryAfterMs: 30_000 });
    expect(stub.requests).toHaveLength(1);
  });

  it("times out a call that hangs, and passes a caller's abort through", async () => {
    stub.script(geminiReply.hang());
    expect(await failure(provider().generate(request({ timeoutMs: 150 })))).toMatchObject({ kind: "provider_timeout" });
    stub.script(geminiReply.hang());
    const controller = new AbortController();
    const reason = new Error("shutting down");
    setTimeout(() => controller.abort(reason), 50);
    await expect(provider().generate(request({ signal: controller.signal }))).rejects.toBe(reason);
  });

  it("reports a connection failure after retrying it", async () => {
    const error = await failure(provider({ baseUrl: "http://127.0.0.1:1", maxRetries: 1 }).generate(request()));
    expect(error).toMatchObject({ kind: "provider_error", retries: 1 });
    expect(error.message).toContain("could not reach gemini (ECONNREFUSED)");
  });
});
