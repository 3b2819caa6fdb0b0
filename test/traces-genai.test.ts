/**
 * The GenAI mapping (docs/observability.md "Mapping") in both run modes: spans made by the real
 * OpenTelemetry SDK with every mapped attribute of the current GenAI conventions, their event-based
 * messages, OpenInference, sent with the SDK's protobuf and JSON exporters; and the spans the Vercel
 * AI SDK (`ai`, `@ai-sdk/openai`) emits with `experimental_telemetry` against the OpenAI stub.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INPUT, makeSpans, OUTPUT, price, SYSTEM, TOOLS } from "./support/genai-spans.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { EXPORTERS, memoryTracer, sendSpans, TRACE_MODES } from "./support/trace-modes.js";

describe.each(TRACE_MODES)("GenAI mapping ($name)", (mode) => {
  let stop: () => Promise<void>;
  let base: string;
  let a: FlowResult;

  beforeAll(async () => {
    const started = await mode.start();
    stop = started.stop;
    base = started.baseUrl;
    a = await runIdentityFlow(base, ["traces:write", "traces:read"]);
  }, 180_000);

  afterAll(async () => {
    await stop?.();
  });

  const spansOf = async (traceId: string) => {
    const got = await call(base, "GET", `/api/traces/${traceId}`, { apiKey: a.apiKey });
    expect(got.status).toBe(200);
    return { trace: got.body, byName: new Map(got.body.spans.map((s: { name: string }) => [s.name, s])) };
  };

  for (const [format, make] of EXPORTERS) {
    it(`maps every GenAI, event and OpenInference attribute sent as ${format}`, async () => {
      const session = `genai-${format.split(",")[0]}`;
      const spans = makeSpans(session);
      const traceId = spans[0]?.spanContext().traceId as string;
      expect(await sendSpans(make(base, a.apiKey), spans)).toMatchObject({ code: 0 });
      const { trace: t, byName } = await spansOf(traceId);
      expect(t).toMatchObject({
        sessionId: session,
        status: "error",
        spanCount: 8,
        inputTokens: 130,
        outputTokens: 30,
      });
      expect(byName.get("chat gpt-4o")).toMatchObject({
        attributes: { "gen_ai.request.seed": 7 },
        generation: {
          operation: "chat",
          provider: "openai",
          requestModel: "gpt-4o",
          responseModel: "gpt-4o-2024-08-06",
          // The response model is not in the price table: priced by the request model, its 40 cache
          // reads at the cached-input price (docs/providers.md "How usage is priced").
          costUsd: price("gpt-4o", 100, 20, 40),
          inputTokens: 100,
          outputTokens: 20,
          cacheReadInputTokens: 40,
          cacheCreationInputTokens: 10,
          reasoningTokens: null,
          parameters: { temperature: 0.2, max_tokens: 200, top_p: 0.9, stop_sequences: ["END"], seed: 7 },
          responseId: "chatcmpl-1",
          finishReasons: ["tool_call"],
          errorType: null,
          systemInstructions: SYSTEM,
          inputMessages: INPUT,
          outputMessages: OUTPUT,
          toolCalls: [{ id: "call_1", name: "get_weather", arguments: { city: "Paris" } }],
          toolDefinitions: TOOLS,
        },
        toolCall: null,
      });
      expect(byName.get("execute_tool get_weather")).toMatchObject({
        generation: null,
        toolCall: {
          id: "call_1",
          name: "get_weather",
          type: "function",
          arguments: { city: "Paris" },
          result: { temp: 21 },
        },
      });
      expect(byName.get("chat events")).toMatchObject({
        generation: {
          provider: "openai",
          requestModel: "gpt-4o-mini",
          inputTokens: null,
          costUsd: null,
          inputMessages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "Hi" },
          ],
          outputMessages: [{ role: "assistant", index: 0, finish_reason: "stop", content: "Hello" }],
          toolCalls: null,
        },
      });
      expect(byName.get("chat details")).toMatchObject({
        generation: { requestModel: "gpt-4o-mini", inputMessages: INPUT, outputMessages: null },
      });
      expect(byName.get("chat failed")).toMatchObject({
        status: "error",
        generation: { errorType: "timeout", costUsd: null },
      });
      expect(byName.get("ChatOpenAI")).toMatchObject({
        generation: {
          operation: "chat",
          provider: "openai",
          requestModel: "gpt-4o-mini",
          inputTokens: 30,
          outputTokens: 10,
          cacheReadInputTokens: 5,
          cacheCreationInputTokens: 3,
          reasoningTokens: 2,
          costUsd: price("gpt-4o-mini", 30, 10, 5),
          parameters: { temperature: 0 },
          inputMessages: [
            { role: "system", content: "Be brief." },
            { role: "user", contents: [{ type: "text", text: "Weather in Oslo?" }] },
          ],
          outputMessages: [
            {
              role: "assistant",
              tool_calls: [{ id: "call_9", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
            },
          ],
          toolCalls: [{ id: "call_9", name: "get_weather", arguments: { city: "Oslo" } }],
          toolDefinitions: [{ json_schema: '{"name":"get_weather"}' }],
        },
      });
      expect(byName.get("get_weather")).toMatchObject({
        generation: null,
        toolCall: { id: "call_9", name: "get_weather", arguments: { city: "Oslo" }, result: "cold" },
      });
    });
  }

  it("maps the spans the Vercel AI SDK emits with experimental_telemetry", async () => {
    const stub = await startOpenAIStub({ apiKey: "sk-stub" });
    try {
      stub.script(
        stubReply.toolCalls([{ id: "call_7", name: "get_weather", arguments: { city: "Paris" } }], {
          usage: { prompt_tokens: 50, completion_tokens: 8 },
        }),
        stubReply.text("Sunny in Paris.", { usage: { prompt_tokens: 70, completion_tokens: 6 } }),
      );
      // The AI SDK nests its spans through the active context, as an app's NodeSDK would set it up.
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      const { provider, memory } = memoryTracer("ai-sdk-app");
      const openai = createOpenAI({ baseURL: stub.baseUrl, apiKey: "sk-stub" });
      const result = await generateText({
        model: openai.chat("gpt-4o-mini"),
        prompt: "Weather in Paris?",
        tools: {
          get_weather: tool({
            description: "The weather of a city",
            inputSchema: jsonSchema<{ city: string }>({
              type: "object",
              properties: { city: { type: "string" } },
              required: ["city"],
            }),
            execute: async ({ city }) => ({ city, temp: 21 }),
          }),
        },
        stopWhen: stepCountIs(2),
        experimental_telemetry: {
          isEnabled: true,
          tracer: provider.getTracer("ai"),
          functionId: "weather",
          metadata: { sessionId: "ai-sdk-session" },
        },
      });
      expect(result.text).toBe("Sunny in Paris.");
      const spans = memory.getFinishedSpans();
      const traceId = spans[0]?.spanContext().traceId as string;
      expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
      expect(await sendSpans(EXPORTERS[0][1](base, a.apiKey), spans)).toMatchObject({ code: 0 });

      const { trace: t } = await spansOf(traceId);
      expect(t).toMatchObject({
        name: "ai.generateText",
        sessionId: "ai-sdk-session",
        inputTokens: 120,
        outputTokens: 14,
      });
      expect(t.costUsd).toBeCloseTo(price("gpt-4o-mini", 120, 14), 12);
      const calls = t.spans.filter((s: { name: string }) => s.name === "ai.generateText.doGenerate");
      expect(calls).toHaveLength(2);
      expect(calls[0].generation).toMatchObject({
        operation: "chat",
        provider: "openai",
        requestModel: "gpt-4o-mini",
        responseModel: "gpt-4o-mini",
        inputTokens: 50,
        outputTokens: 8,
        costUsd: price("gpt-4o-mini", 50, 8),
        inputMessages: [{ role: "user", content: [{ type: "text", text: "Weather in Paris?" }] }],
        toolCalls: [{ id: "call_7", name: "get_weather", arguments: { city: "Paris" } }],
        finishReasons: ["tool-calls"],
      });
      expect(calls[0].generation.toolDefinitions).toEqual(expect.arrayContaining([expect.anything()]));
      expect(calls[1].generation).toMatchObject({
        inputTokens: 70,
        outputTokens: 6,
        outputMessages: [{ role: "assistant", content: "Sunny in Paris." }],
        finishReasons: ["stop"],
      });
      expect(calls[1].generation.responseId).toEqual(expect.any(String));
      const toolSpan = t.spans.find((s: { name: string }) => s.name === "ai.toolCall");
      expect(toolSpan.toolCall).toMatchObject({
        id: "call_7",
        name: "get_weather",
        arguments: { city: "Paris" },
        result: { city: "Paris", temp: 21 },
      });
      // The outer span sums its steps: not a generation, or the trace would count them twice.
      expect(t.spans.find((s: { name: string }) => s.name === "ai.generateText").generation).toBeNull();
    } finally {
      await stub.close();
    }
  });
});
