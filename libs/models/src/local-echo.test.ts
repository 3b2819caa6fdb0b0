import { Ajv2020 } from "ajv/dist/2020.js";
import ajvFormats from "ajv-formats";
import { afterEach, describe, expect, it, vi } from "vitest";
import { countWords, createLocalEchoProvider } from "./local-echo.js";
import {
  type ChatMessage,
  type ModelDelta,
  type ModelRequest,
  ProviderError,
  type ToolDefinition,
} from "./provider.js";

const echo = createLocalEchoProvider();
const ajv = new Ajv2020({ strict: false });
ajvFormats.default(ajv);

const MESSAGES: ChatMessage[] = [
  { role: "system", content: "You are a weather bot." },
  { role: "developer", content: "Answer in one line." },
  { role: "user", content: "Weather in Paris?" },
];

const WEATHER_TOOL: ToolDefinition = {
  name: "get_weather",
  description: "Current weather",
  inputSchema: {
    type: "object",
    properties: {
      city: { type: "string" },
      days: { type: "integer", minimum: 1 },
      unit: { enum: ["C", "F"] },
      detailed: { type: "boolean" },
    },
    required: ["city", "days"],
  },
};
const CLOCK_TOOL: ToolDefinition = {
  name: "get_time",
  inputSchema: { type: "object", properties: { zone: { type: "string", maxLength: 3 } }, required: ["zone"] },
};

function request(extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model: "echo", messages: MESSAGES, ...extra };
}

afterEach(() => vi.restoreAllMocks());

describe("local/echo", () => {
  it("answers with the system, developer and user contents joined, counting words", async () => {
    const result = await echo.generate(request());
    expect(result).toEqual({
      text: "You are a weather bot.\n\nAnswer in one line.\n\nWeather in Paris?",
      toolCalls: [],
      usage: { inputTokens: 12, outputTokens: 12 },
      finishReason: "stop",
      provider: "local",
      model: "echo",
      retries: 0,
    });
  });

  it("streams the same answer in up to four pieces, and each tool call in one delta", async () => {
    const whole = await echo.generate({ model: "echo", messages: MESSAGES });
    const deltas: ModelDelta[] = [];
    const streamed = await echo.generate({ model: "echo", messages: MESSAGES, onDelta: (d) => deltas.push(d) });
    expect(streamed).toEqual(whole);
    expect(deltas.length).toBe(4);
    expect(deltas.map((d) => (d.type === "text" ? d.text : "")).join("")).toBe(whole.text);
    const calls: ModelDelta[] = [];
    const called = await echo.generate({
      model: "echo",
      messages: MESSAGES,
      tools: [WEATHER_TOOL],
      onDelta: (d) => calls.push(d),
    });
    expect(calls).toEqual([
      {
        type: "tool_call",
        index: 0,
        id: "call_echo_1",
        name: "get_weather",
        arguments: JSON.stringify(called.toolCalls[0]?.input),
      },
    ]);
  });

  it("calls each offered tool once, with inputs from the schemas and same-named variables", async () => {
    const result = await echo.generate(
      request({ tools: [WEATHER_TOOL, CLOCK_TOOL], variables: { city: "Paris", unit: "F", days: "two" } }),
    );
    expect(result.finishReason).toBe("tool_calls");
    expect(result.text).toBe("");
    expect(result.toolCalls).toEqual([
      { id: "call_echo_1", name: "get_weather", input: { city: "Paris", days: 1, unit: "F", detailed: false } },
      { id: "call_echo_2", name: "get_time", input: { zone: "You" } },
    ]);
    for (const [i, tool] of [WEATHER_TOOL, CLOCK_TOOL].entries()) {
      expect(ajv.validate(tool.inputSchema, result.toolCalls[i]?.input), tool.name).toBe(true);
    }
    expect(result.usage).toEqual({ inputTokens: 12, outputTokens: 2 });
  });

  it("answers with the tool results appended once the conversation holds them", async () => {
    const messages: ChatMessage[] = [
      ...MESSAGES,
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "call_echo_1", name: "get_weather", input: { city: "Paris" } }],
      },
      { role: "tool", toolCallId: "call_echo_1", content: '{"tempC": 21}' },
    ];
    const result = await echo.generate(request({ messages, tools: [WEATHER_TOOL] }));
    expect(result.finishReason).toBe("stop");
    expect(result.toolCalls).toEqual([]);
    expect(result.text).toBe('You are a weather bot.\n\nAnswer in one line.\n\nWeather in Paris?\n\n{"tempC": 21}');
    // 12 prompt words, the call's input {"city":"Paris"} (1), the tool result (2)
    expect(result.usage).toEqual({ inputTokens: 15, outputTokens: 14 });
  });

  it("answers a json_schema format with a valid instance whose strings hold the text", async () => {
    const schema = {
      type: "object",
      properties: {
        summary: { type: "string" },
        tempC: { type: "number", minimum: -50 },
        sources: { type: "array", items: { type: "string", format: "uri" } },
      },
      required: ["summary", "tempC", "sources"],
      additionalProperties: false,
    };
    const result = await echo.generate(request({ responseFormat: { type: "json_schema", name: "weather", schema } }));
    const text = "You are a weather bot.\n\nAnswer in one line.\n\nWeather in Paris?";
    expect(result.json).toEqual({ summary: text, tempC: -50, sources: ["https://example.com/"] });
    expect(ajv.validate(schema, result.json)).toBe(true);
    expect(result.text).toBe(JSON.stringify(result.json));
    expect(result.usage.outputTokens).toBe(countWords(result.text));
    // The serialization writes the blank lines as "\n\n", which joins the words around them.
    expect(result.usage.outputTokens).toBe(10);
  });

  it("is deterministic: equal requests, equal results, no clock and no randomness", async () => {
    const random = vi.spyOn(Math, "random");
    const now = vi.spyOn(Date, "now");
    const req = request({
      tools: [WEATHER_TOOL],
      responseFormat: {
        type: "json_schema",
        name: "x",
        schema: { type: "object", properties: { a: { type: "string" } } },
      },
    });
    const first = await echo.generate(req);
    const second = await echo.generate(structuredClone({ ...req, signal: undefined }));
    expect(second).toEqual(first);
    expect(random).not.toHaveBeenCalled();
    expect(now).not.toHaveBeenCalled();
  });

  it("counts whitespace-separated words", () => {
    expect(countWords("")).toBe(0);
    expect(countWords("  one\ttwo\n\nthree  ")).toBe(3);
    expect(countWords('{"a":"b c"}')).toBe(2);
  });

  it("knows only the model echo", async () => {
    await expect(echo.generate(request({ model: "parrot" }))).rejects.toMatchObject({
      kind: "provider_error",
      provider: "local",
    });
  });

  it("fails with provider_error for a response schema that admits no value", async () => {
    const error = await echo
      .generate(
        request({
          responseFormat: {
            type: "json_schema",
            name: "x",
            schema: { $ref: "#/$defs/loop", $defs: { loop: { $ref: "#/$defs/loop" } } },
          },
        }),
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      kind: "provider_error",
      message: expect.stringContaining("local/echo could not answer"),
    });
  });

  it("rejects with the caller's reason when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("shutting down"));
    await expect(echo.generate(request({ signal: controller.signal }))).rejects.toThrow("shutting down");
    const timedOut = AbortSignal.abort(new DOMException("run budget spent", "TimeoutError"));
    await expect(echo.generate(request({ signal: timedOut }))).rejects.toMatchObject({ kind: "provider_timeout" });
  });
});

describe("local/echo: tool choice and JSON mode", () => {
  it("calls no tool for tool choice none, only the named one for a named choice", async () => {
    const tools = [WEATHER_TOOL, CLOCK_TOOL];
    const none = await echo.generate(request({ tools, toolChoice: "none" }));
    expect(none.toolCalls).toEqual([]);
    expect(none.finishReason).toBe("stop");
    const named = await echo.generate(request({ tools, toolChoice: { name: "get_time" } }));
    expect(named.toolCalls.map((c) => c.name)).toEqual(["get_time"]);
    const auto = await echo.generate(request({ tools, toolChoice: "auto" }));
    expect(auto.toolCalls.map((c) => c.name)).toEqual(["get_weather", "get_time"]);
  });

  it("answers a JSON object holding the text for json_object", async () => {
    const result = await echo.generate(request({ responseFormat: { type: "json_object" } }));
    const text = "You are a weather bot.\n\nAnswer in one line.\n\nWeather in Paris?";
    expect(result.json).toEqual({ text });
    expect(JSON.parse(result.text)).toEqual({ text });
  });
});
