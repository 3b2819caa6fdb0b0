/**
 * A caller's span of a call to Kiln's own `/v1` joined to the Kiln run it continues
 * (docs/observability.md "Joined runs"): the official `@opentelemetry/instrumentation-openai`
 * around the `openai` package calls the gateway's `/v1/chat/completions` for a prompt on the OpenAI
 * stub, with `traceparent`, and exports its spans to Kiln. The trace holds the app's client span
 * and Kiln's run spans; its totals are one call's tokens and cost, not two.
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OpenAIInstrumentation } from "@opentelemetry/instrumentation-openai";
import OpenAI, * as openaiModule from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbedded } from "./support/embedded.js";
import { price } from "./support/genai-spans.js";
import { call, eventually, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { EXPORTERS, memoryTracer, sendSpans } from "./support/trace-modes.js";

interface SpanView {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: string;
  generation: { inputTokens: number | null; outputTokens: number | null } | null;
  continuedByRunId: string | null;
}

/**
 * fetch writing the active span's `traceparent`, as an HTTP client instrumentation (undici's) does:
 * the span active there is instrumentation-openai's client span of the call.
 */
const tracingFetch: typeof fetch = (url, init) => {
  const headers = new Headers(init?.headers);
  const span = trace.getActiveSpan()?.spanContext();
  if (span) headers.set("traceparent", `00-${span.traceId}-${span.spanId}-01`);
  return fetch(url, { ...init, headers });
};

describe("a caller's span of a Kiln run, joined to it (embedded)", () => {
  let stub: OpenAIStub;
  let stop: () => Promise<void>;
  let base: string;
  let flow: FlowResult;
  let promptName: string;

  beforeAll(async () => {
    stub = await startOpenAIStub({ apiKey: "sk-stub" });
    const started = await startEmbedded({
      providers: loadProvidersConfig({ OPENAI_API_KEY: "sk-stub", OPENAI_BASE_URL: stub.baseUrl }),
    });
    stop = () => started.kiln.close();
    base = started.baseUrl;
    flow = await runIdentityFlow(base, ["prompts:read", "runs:write", "traces:read", "traces:write"]);
    promptName = `Greeter ${Date.now()}`;
    await createTestClient(base).createPublishedPrompt(
      flow.token,
      flow.organizationId,
      {
        model: "openai/gpt-4o-mini",
        systemPrompt: "Greet {{person}} warmly.",
        variablesSchema: { type: "object", properties: { person: { type: "string" } }, required: ["person"] },
      },
      { name: promptName },
    );
  }, 180_000);

  afterAll(async () => {
    await stop?.();
    await stub?.close();
  });

  it("counts the call once: the app's client span is continued by the run, whose model call is priced", async () => {
    stub.script(stubReply.text("Hello, Grace!", { usage: { prompt_tokens: 20, completion_tokens: 4 } }));
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const { provider, memory } = memoryTracer("chat-app");
    const instrumentation = new OpenAIInstrumentation({ captureMessageContent: true });
    instrumentation.setTracerProvider(provider);
    for (const definition of instrumentation.getModuleDefinitions()) definition.patch?.(openaiModule as never);
    try {
      const openai = new OpenAI({ apiKey: flow.apiKey, baseURL: `${base}/v1`, maxRetries: 0, fetch: tracingFetch });
      const answer = await openai.chat.completions.create({
        model: `kiln/${promptName}`,
        messages: [],
        variables: { person: "Grace" },
      } as never);
      expect((answer as OpenAI.ChatCompletion).choices[0]?.message.content).toBe("Hello, Grace!");
    } finally {
      for (const definition of instrumentation.getModuleDefinitions()) definition.unpatch?.(openaiModule as never);
      instrumentation.disable();
    }
    const spans = memory.getFinishedSpans();
    // The package's own shape: one client span of the call, with the usage Kiln answered.
    expect(spans).toHaveLength(1);
    expect(spans[0]?.attributes).toMatchObject({ "gen_ai.usage.input_tokens": 20, "gen_ai.usage.output_tokens": 4 });
    const { traceId, spanId } = (spans[0] as (typeof spans)[number]).spanContext();
    expect(await sendSpans(EXPORTERS[0][1](base, flow.apiKey), spans)).toMatchObject({ code: 0 });

    // Kiln's run spans are stored in the background: the app's span, the run's root and its model call.
    let t: { inputTokens: number; outputTokens: number; costUsd: number | null; models: string[]; spans: SpanView[] } =
      {} as never;
    await eventually(async () => {
      const r = await call(base, "GET", `/api/traces/${traceId}`, { apiKey: flow.apiKey });
      t = r.body;
      return r.status === 200 && r.body.spanCount >= 3;
    }, 15_000);
    const root = t.spans.find((s) => s.name.startsWith("run_prompt ")) as SpanView;
    expect(root.parentSpanId).toBe(spanId);
    const client = t.spans.find((s) => s.spanId === spanId) as SpanView;
    expect(client.generation).toMatchObject({ inputTokens: 20, outputTokens: 4 });
    expect(client.continuedByRunId).toMatch(/^run_/);
    expect(t.spans.filter((s) => s.spanId !== spanId).every((s) => s.continuedByRunId === null)).toBe(true);
    // One call's totals: the run's priced model call, not the app's span of it again.
    expect(t).toMatchObject({ inputTokens: 20, outputTokens: 4, models: ["gpt-4o-mini"] });
    expect(t.costUsd).toBeCloseTo(price("gpt-4o-mini", 20, 4), 12);
  });
});
