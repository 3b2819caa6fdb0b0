import type { DomainError } from "@kiln/kit/errors";
import { type BedrockStub, bedrockReply, startBedrockStub } from "@kiln/testing/bedrock-stub";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type BedrockProviderOptions, createBedrockProvider } from "./bedrock-provider.js";
import { type ChatMessage, type ModelDelta, type ModelRequest, ProviderError } from "./provider.js";

const CREDENTIALS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
let stub: BedrockStub;

beforeAll(async () => {
  stub = await startBedrockStub({ ...CREDENTIALS, region: "us-east-1" });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

function provider(options: Partial<BedrockProviderOptions> = {}) {
  return createBedrockProvider({
    id: "bedrock",
    region: "us-east-1",
    ...CREDENTIALS,
    baseUrl: stub.baseUrl,
    timeoutMs: 5_000,
    maxRetries: 2,
    ...options,
  });
}

const MESSAGES: ChatMessage[] = [
  { role: "system", content: "You are terse.", cache: true },
  { role: "developer", content: "Use metric units." },
  { role: "user", content: "Weather in Paris?" },
];
const MODEL = "amazon.nova-lite-v1:0";
const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({ model: MODEL, messages: MESSAGES, ...extra });

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe("createBedrockProvider: requests and answers", () => {
  it("signs the Converse call, sends system blocks and inferenceConfig, and returns text and usage", async () => {
    stub.script(bedrockReply.text("Sunny, 21 °C.", { usage: { inputTokens: 31, outputTokens: 7 } }));
    const result = await provider().generate(
      request({ temperature: 0.2, maxOutputTokens: 100, topP: 0.9, stop: ["END"] }),
    );
    expect(result).toEqual({
      text: "Sunny, 21 °C.",
      toolCalls: [],
      usage: { inputTokens: 31, outputTokens: 7 },
      finishReason: "stop",
      provider: "bedrock",
      model: MODEL,
      retries: 0,
    });
    const [sent] = stub.requests;
    expect(sent?.rawPath).toBe("/model/amazon.nova-lite-v1%3A0/converse");
    expect(sent?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/bedrock\//,
    );
    expect(sent?.body).toEqual({
      system: [{ text: "You are terse." }, { cachePoint: { type: "default" } }, { text: "Use metric units." }],
      messages: [{ role: "user", content: [{ text: "Weather in Paris?" }] }],
      inferenceConfig: { maxTokens: 100, temperature: 0.2, topP: 0.9, stopSequences: ["END"] },
    });
  });

  it("signs temporary credentials with their session token", async () => {
    stub.script(bedrockReply.text("ok"));
    await provider({ sessionToken: "FwoGZXIvYXdzEXAMPLETOKEN" }).generate(request());
    expect(stub.requests[0]?.headers["x-amz-security-token"]).toBe("FwoGZXIvYXdzEXAMPLETOKEN");
    expect(stub.requests[0]?.headers.authorization).toContain("x-amz-security-token");
  });

  it("normalizes usage: Converse's inputTokens leave cache reads and writes out", async () => {
    stub.script(
      bedrockReply.text("ok", {
        usage: { inputTokens: 100, outputTokens: 20, cacheReadInputTokens: 800, cacheWriteInputTokens: 50 },
      }),
    );
    const { usage } = await provider().generate(request());
    expect(usage).toEqual({ inputTokens: 950, cachedInputTokens: 800, cacheWriteInputTokens: 50, outputTokens: 20 });
  });

  it("asks for structured output with outputConfig and parses the answer; thinking only for Anthropic models", async () => {
    stub.script(bedrockReply.json({ tempC: 21 }), bedrockReply.text("x"), bedrockReply.text("y"));
    const schema = { type: "object", properties: { tempC: { type: "number" } } };
    const result = await provider().generate(
      request({ responseFormat: { type: "json_schema", name: "weather report", schema } }),
    );
    expect(result.json).toEqual({ tempC: 21 });
    expect(stub.requests[0]?.body.outputConfig).toEqual({
      textFormat: {
        type: "json_schema",
        structure: { jsonSchema: { schema: JSON.stringify(schema), name: "weather_report" } },
      },
    });
    await provider().generate(
      request({ model: "anthropic.claude-3-5-haiku-20241022-v1:0", reasoning: { budgetTokens: 2048 } }),
    );
    expect(stub.requests[1]?.body.additionalModelRequestFields).toEqual({
      thinking: { type: "enabled", budget_tokens: 2048 },
    });
    await provider().generate(request({ reasoning: { budgetTokens: 2048 } }));
    expect(stub.requests[2]?.body.additionalModelRequestFields).toBeUndefined();
  });

  it("sends data: images as bytes and refuses https images without a request", async () => {
    stub.script(bedrockReply.text("a cat"));
    const parts = (url: string): ChatMessage[] => [
      {
        role: "user",
        content: "What?",
        parts: [
          { type: "text", text: "What?" },
          { type: "image", url },
        ],
      },
    ];
    await provider().generate(request({ messages: parts("data:image/png;base64,iVBORw0KGgo=") }));
    expect(stub.requests[0]?.body.messages[0].content[1]).toEqual({
      image: { format: "png", source: { bytes: "iVBORw0KGgo=" } },
    });
    const refused = await provider()
      .generate(request({ messages: parts("https://example.com/cat.png") }))
      .catch((e) => e);
    expect((refused as DomainError).kind).toBe("invalid_argument");
    expect(stub.requests).toHaveLength(1);
  });

  it("maps stop reasons", async () => {
    stub.script(
      bedrockReply.text("cut", { stopReason: "max_tokens" }),
      bedrockReply.text("", { stopReason: "guardrail_intervened" }),
      bedrockReply.text("", { stopReason: "content_filtered" }),
      bedrockReply.text("END", { stopReason: "stop_sequence" }),
      bedrockReply.text("?", { stopReason: "malformed_model_output" }),
    );
    const reasons = [];
    for (let i = 0; i < 5; i++) reasons.push((await provider().generate(request())).finishReason);
    expect(reasons).toEqual(["length", "content_filter", "content_filter", "stop", "other"]);
  });
});

describe("createBedrockProvider: tools", () => {
  const tools = [
    {
      name: "lookup",
      description: "Weather",
      inputSchema: { type: "object", properties: { city: { type: "string" } } },
    },
  ];

  it("declares tools and the choice, and runs the toolUse / toolResult round trip", async () => {
    stub.script(
      bedrockReply.toolUses([
        { toolUseId: "tu-1", name: "lookup", input: { city: "Paris" } },
        { toolUseId: "tu-2", name: "lookup", input: { city: "Rome" } },
      ]),
      bedrockReply.text("Paris 21, Rome 25"),
    );
    const first = await provider().generate(request({ tools, toolChoice: { name: "lookup" } }));
    expect(first).toMatchObject({
      finishReason: "tool_calls",
      toolCalls: [
        { id: "tu-1", name: "lookup", input: { city: "Paris" } },
        { id: "tu-2", name: "lookup", input: { city: "Rome" } },
      ],
    });
    expect(stub.requests[0]?.body.toolConfig).toEqual({
      tools: [{ toolSpec: { name: "lookup", description: "Weather", inputSchema: { json: tools[0]?.inputSchema } } }],
      toolChoice: { tool: { name: "lookup" } },
    });
    const second = await provider().generate(
      request({
        tools,
        messages: [
          ...MESSAGES,
          { role: "assistant", content: "", toolCalls: first.toolCalls },
          { role: "tool", toolCallId: "tu-1", content: '{"tempC":21}' },
          { role: "tool", toolCallId: "tu-2", content: "25 degrees" },
        ],
      }),
    );
    expect(second.text).toBe("Paris 21, Rome 25");
    expect(stub.requests[1]?.body.messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: [
          { toolUse: { toolUseId: "tu-1", name: "lookup", input: { city: "Paris" } } },
          { toolUse: { toolUseId: "tu-2", name: "lookup", input: { city: "Rome" } } },
        ],
      },
      {
        role: "user",
        content: [
          { toolResult: { toolUseId: "tu-1", content: [{ json: { tempC: 21 } }] } },
          { toolResult: { toolUseId: "tu-2", content: [{ text: "25 degrees" }] } },
        ],
      },
    ]);
  });

  it("maps required to any, and none to no tools offered", async () => {
    stub.script(bedrockReply.text("x"), bedrockReply.text("y"));
    await provider().generate(request({ tools, toolChoice: "required" }));
    expect(stub.requests[0]?.body.toolConfig.toolChoice).toEqual({ any: {} });
    await provider().generate(request({ tools, toolChoice: "none" }));
    expect(stub.requests[1]?.body.toolConfig).toBeUndefined();
  });
});

describe("createBedrockProvider: streaming", () => {
  it("decodes event-stream frames into text and tool-call pieces, and resolves to the whole turn", async () => {
    stub.script(
      bedrockReply.toolUses([{ toolUseId: "tu-9", name: "lookup", input: { city: "Oslo" } }], {
        text: "Checking.",
        usage: { inputTokens: 9, outputTokens: 4, cacheReadInputTokens: 3 },
      }),
    );
    const deltas: ModelDelta[] = [];
    const result = await provider().generate(request({ onDelta: (d) => deltas.push(d) }));
    expect(stub.requests[0]?.rawPath).toBe("/model/amazon.nova-lite-v1%3A0/converse-stream");
    expect(deltas[0]).toEqual({ type: "text", text: "Checking." });
    expect(deltas[1]).toEqual({ type: "tool_call", index: 0, id: "tu-9", name: "lookup", arguments: "" });
    expect(
      deltas
        .slice(2)
        .map((d) => (d.type === "tool_call" ? d.arguments : ""))
        .join(""),
    ).toBe('{"city":"Oslo"}');
    expect(result).toMatchObject({
      text: "Checking.",
      finishReason: "tool_calls",
      toolCalls: [{ id: "tu-9", name: "lookup", input: { city: "Oslo" } }],
      usage: { inputTokens: 12, cachedInputTokens: 3, outputTokens: 4 },
    });
  });

  it("fails a stream that ends with an exception frame, without retrying it", async () => {
    stub.script(bedrockReply.streamException("one two three", 2));
    const deltas: ModelDelta[] = [];
    const error = await failure(provider().generate(request({ onDelta: (d) => deltas.push(d) })));
    expect(error.kind).toBe("provider_error");
    expect(error.message).toContain("modelStreamErrorException");
    expect(deltas).toEqual([{ type: "text", text: "one " }]);
    expect(stub.requests).toHaveLength(1);
  });
});

describe("createBedrockProvider: failures", () => {
  it("does not retry 400 or 403, and shows Bedrock's error type and message, not the secret", async () => {
    const wrong = await failure(provider({ secretAccessKey: "not-the-right-secret-key" }).generate(request()));
    expect(wrong).toMatchObject({ status: 403, retries: 0 });
    expect(wrong.message).toContain("InvalidSignatureException");
    const unknown = await failure(provider({ accessKeyId: "AKIDOTHER" }).generate(request()));
    expect(unknown.message).toContain("UnrecognizedClientException");
    stub.script(bedrockReply.error(400, "ValidationException", "The provided model identifier is invalid."));
    expect(await failure(provider().generate(request()))).toMatchObject({ status: 400, retries: 0 });
    stub.script(bedrockReply.error(401, "UnrecognizedClientException", "Unauthorized"));
    expect(await failure(provider().generate(request()))).toMatchObject({ status: 401, retries: 0 });
    expect(stub.requests).toHaveLength(4);
  });

  it("retries ThrottlingException (429) and 5xx, each attempt signed (and verified) afresh", async () => {
    stub.script(
      bedrockReply.throttled(),
      bedrockReply.error(503, "ServiceUnavailableException", "Try later."),
      bedrockReply.text("ok"),
    );
    const result = await provider().generate(request());
    expect(result).toMatchObject({ text: "ok", retries: 2 });
    expect(stub.requests).toHaveLength(3);
  });

  it("gives up after maxRetries with the 429 as the failure", async () => {
    stub.script(...bedrockReply.times(3, bedrockReply.throttled()));
    const error = await failure(provider().generate(request()));
    expect(error).toMatchObject({ status: 429, retries: 2 });
    expect(error.message).toContain("ThrottlingException: Too many requests");
  });

  it("times out a call that hangs, and passes a caller's abort through", async () => {
    stub.script(bedrockReply.hang());
    expect(await failure(provider().generate(request({ timeoutMs: 150 })))).toMatchObject({ kind: "provider_timeout" });
    stub.script(bedrockReply.hang());
    const controller = new AbortController();
    const reason = new Error("shutting down");
    setTimeout(() => controller.abort(reason), 50);
    await expect(provider().generate(request({ signal: controller.signal }))).rejects.toBe(reason);
  });
});
