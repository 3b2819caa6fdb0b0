/**
 * The spans the Vercel AI SDK 7 (`ai` 7 with `@ai-sdk/otel`, pinned in test/package.json as the
 * aliases `ai7` and `ai-sdk-openai4` beside the AI SDK 6 of traces-genai.test.ts) emits against the
 * OpenAI stub: its root `invoke_agent` span repeats the summed usage of its model calls and must not
 * be counted as another one.
 */
import { OpenTelemetry } from "@ai-sdk/otel";
import { LangChainInstrumentation } from "@arizeai/openinference-instrumentation-langchain";
import { startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import * as CallbackManagerModule from "@langchain/core/callbacks/manager";
import { ChatOpenAI } from "@langchain/openai";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { createOpenAI } from "ai-sdk-openai4";
import { generateText, registerTelemetry } from "ai7";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { price } from "./support/genai-spans.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { EXPORTERS, memoryTracer, sendSpans, TRACE_MODES } from "./support/trace-modes.js";

describe("GenAI mapping of the Vercel AI SDK 7 and LangChain under OpenInference", () => {
  let stop: () => Promise<void>;
  let base: string;
  let a: FlowResult;

  beforeAll(async () => {
    const started = await (TRACE_MODES[0] as (typeof TRACE_MODES)[number]).start();
    stop = started.stop;
    base = started.baseUrl;
    a = await runIdentityFlow(base, ["traces:write", "traces:read"]);
  }, 180_000);

  afterAll(async () => {
    await stop?.();
  });

  it("counts one model call once: the root invoke_agent span that sums it is not a generation", async () => {
    const stub = await startOpenAIStub({ apiKey: "sk-stub" });
    try {
      stub.script(stubReply.text("Hi.", { usage: { prompt_tokens: 12, completion_tokens: 5 } }));
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      const { provider, memory } = memoryTracer("ai-sdk-7-app");
      registerTelemetry(new OpenTelemetry({ tracer: provider.getTracer("ai") }));
      const openai = createOpenAI({ baseURL: stub.baseUrl, apiKey: "sk-stub" });
      const result = await generateText({ model: openai.chat("gpt-4o-mini"), prompt: "Hello" });
      expect(result.text).toBe("Hi.");
      const spans = memory.getFinishedSpans();
      // The package's own shape: the root carries the same model and usage as its one model call.
      const root = spans.find((s) => s.parentSpanContext === undefined);
      expect(root?.attributes).toMatchObject({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 5,
      });
      const traceId = spans[0]?.spanContext().traceId as string;
      expect(await sendSpans(EXPORTERS[0][1](base, a.apiKey), spans)).toMatchObject({ code: 0 });

      const got = await call(base, "GET", `/api/traces/${traceId}`, { apiKey: a.apiKey });
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({ inputTokens: 12, outputTokens: 5, models: ["gpt-4o-mini"] });
      expect(got.body.costUsd).toBeCloseTo(price("gpt-4o-mini", 12, 5), 12);
      const generations = got.body.spans.filter((s: { generation: unknown }) => s.generation !== null);
      expect(generations.map((s: { name: string }) => s.name)).toEqual(["chat gpt-4o-mini"]);
      expect(generations[0].generation).toMatchObject({ inputTokens: 12, outputTokens: 5, finishReasons: ["stop"] });
      expect(got.body.spans.find((s: { name: string }) => s.name === "invoke_agent gpt-4o-mini").generation).toBeNull();
    } finally {
      await stub.close();
    }
  });

  it("prices LangChain under OpenInference (no provider attribute) and reads its finish reason", async () => {
    const stub = await startOpenAIStub({ apiKey: "sk-stub" });
    try {
      stub.script(stubReply.text("Hej.", { usage: { prompt_tokens: 30, completion_tokens: 10 } }));
      const { provider, memory } = memoryTracer("langchain-app");
      const instrumentation = new LangChainInstrumentation({ tracerProvider: provider });
      instrumentation.manuallyInstrument(CallbackManagerModule);
      const model = new ChatOpenAI({
        model: "gpt-4o-mini",
        apiKey: "sk-stub",
        configuration: { baseURL: stub.baseUrl },
        maxRetries: 0,
      });
      expect((await model.invoke("Hello")).text).toBe("Hej.");
      const spans = memory.getFinishedSpans();
      const llm = spans.find((s) => s.attributes["openinference.span.kind"] === "LLM");
      // The package's own shape: a model name, no provider.
      expect(llm?.attributes["llm.model_name"]).toBe("gpt-4o-mini");
      expect(llm?.attributes["llm.provider"] ?? llm?.attributes["llm.system"]).toBeUndefined();
      const traceId = spans[0]?.spanContext().traceId as string;
      expect(await sendSpans(EXPORTERS[0][1](base, a.apiKey), spans)).toMatchObject({ code: 0 });

      const got = await call(base, "GET", `/api/traces/${traceId}`, { apiKey: a.apiKey });
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({ inputTokens: 30, outputTokens: 10 });
      expect(got.body.costUsd).toBeCloseTo(price("gpt-4o-mini", 30, 10), 12);
      const span = got.body.spans.find((s: { generation: unknown }) => s.generation !== null);
      expect(span.generation).toMatchObject({
        provider: "openai",
        requestModel: "gpt-4o-mini",
        finishReasons: ["stop"],
      });
    } finally {
      await stub.close();
    }
  });
});
