/**
 * OTLP trace ingestion end to end (issue #36) in both run modes over real HTTP: spans made by
 * the OpenTelemetry SDK and sent by its own OTLP/HTTP exporters (protobuf with gzip, and JSON)
 * to `<base>/otel/v1/traces`, read back through /api/traces with every mapped attribute.
 */

import { gzipSync } from "node:zlib";
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

const INPUT = [{ role: "user", parts: [{ type: "text", content: "Weather in Paris?" }] }];
const OUTPUT = [{ role: "assistant", parts: [{ type: "text", content: "Sunny." }], finish_reason: "stop" }];

/** One agent trace: a root span, a current-conventions chat span, an older-conventions span, an unpriced one. */
function makeSpans(session: string): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": "weather-app", "deployment.environment": "test" }),
    spanProcessors: [new SimpleSpanProcessor({ exporter: memory })],
  });
  const tracer = provider.getTracer("weather-agent", "1.0.0");
  const root = tracer.startSpan("invoke_agent weather", { attributes: { "session.id": session } });
  const inRoot = trace.setSpan(context.active(), root);
  {
    tracer
      .startSpan(
        "chat gpt-4o-mini",
        {
          kind: SpanKind.CLIENT,
          attributes: {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.response.model": "gpt-4o-mini",
            "gen_ai.usage.input_tokens": 1000,
            "gen_ai.usage.output_tokens": 500,
            "gen_ai.input.messages": JSON.stringify(INPUT),
            "gen_ai.output.messages": JSON.stringify(OUTPUT),
            "app.custom": "kept",
            "app.list": [1, 2, 3],
          },
        },
        inRoot,
      )
      .end();
    tracer
      .startSpan(
        "openai.chat",
        {
          kind: SpanKind.CLIENT,
          attributes: {
            "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.prompt_tokens": 200,
            "gen_ai.usage.completion_tokens": 100,
            "gen_ai.prompt.0.role": "system",
            "gen_ai.prompt.0.content": "Be brief.",
            "gen_ai.prompt.1.role": "user",
            "gen_ai.prompt.1.content": "Hi",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "Hello!",
            "gen_ai.completion.0.finish_reason": "stop",
          },
        },
        inRoot,
      )
      .end();
    const failed = tracer.startSpan(
      "chat mystery-model",
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "acme",
          "gen_ai.request.model": "mystery-model",
          "gen_ai.usage.input_tokens": 10,
          "gen_ai.usage.output_tokens": 5,
        },
      },
      inRoot,
    );
    failed.setStatus({ code: SpanStatusCode.ERROR, message: "upstream 503" });
    failed.end();
    root.end();
  }
  return memory.getFinishedSpans();
}

async function send(exporter: ProtoExporter | JsonExporter, spans: ReadableSpan[]) {
  const result = await new Promise<{ code: number; error?: Error & { code?: number } }>((resolve) =>
    exporter.export(spans, resolve),
  );
  await exporter.shutdown();
  return result;
}

const MODES = [
  {
    name: "embedded",
    async start() {
      const { kiln, baseUrl } = await startEmbedded();
      return { baseUrl, stop: () => kiln.close() };
    },
  },
  {
    name: "distributed",
    async start() {
      const kiln = await startDistributed({ mongoUrl: inject("mongoUrl"), natsUrl: inject("natsUrl") });
      return { baseUrl: kiln.gatewayUrl, stop: () => kiln.stop() };
    },
  },
];

describe.each(MODES)("OTLP trace ingestion ($name)", (mode) => {
  let stop: () => Promise<void>;
  let base: string;
  let a: FlowResult;
  let b: FlowResult;
  let noScope: FlowResult;

  beforeAll(async () => {
    const started = await mode.start();
    stop = started.stop;
    base = started.baseUrl;
    a = await runIdentityFlow(base, ["traces:write", "traces:read"]);
    b = await runIdentityFlow(base, ["traces:write", "traces:read"]);
    noScope = await runIdentityFlow(base, ["runs:read", "traces:read"]);
  }, 180_000);

  afterAll(async () => {
    await stop?.();
  });

  for (const [format, make] of [
    [
      "protobuf, gzip",
      (key: string) =>
        new ProtoExporter({
          url: `${base}/otel/v1/traces`,
          headers: { authorization: `Bearer ${key}` },
          compression: "gzip" as never,
        }),
    ],
    ["JSON", (key: string) => new JsonExporter({ url: `${base}/otel/v1/traces`, headers: { "x-api-key": key } })],
  ] as const) {
    it(`stores the SDK's spans sent as ${format} and maps every GenAI attribute`, async () => {
      const session = `sess-${format.split(",")[0]}`;
      const spans = makeSpans(session);
      const traceId = spans[0]?.spanContext().traceId as string;
      expect(await send(make(a.apiKey), spans)).toMatchObject({ code: 0 });

      const list = await call(base, "GET", `/api/traces?session=${session}`, { apiKey: a.apiKey });
      expect(list.status).toBe(200);
      expect(list.body.data).toHaveLength(1);
      expect(list.body.data[0]).toMatchObject({
        traceId,
        organizationId: a.organizationId,
        name: "invoke_agent weather",
        sessionId: session,
        status: "error",
        spanCount: 4,
        models: expect.arrayContaining(["gpt-4o-mini", "gpt-4o", "mystery-model"]),
        inputTokens: 1210,
        outputTokens: 605,
        // One generation is unpriced: the trace's cost is unknown, not a partial sum.
        costUsd: null,
      });

      const got = await call(base, "GET", `/api/traces/${traceId}`, { apiKey: a.apiKey });
      expect(got.status).toBe(200);
      const byName = new Map(got.body.spans.map((s: { name: string }) => [s.name, s]));
      const root = byName.get("invoke_agent weather") as { spanId: string; children: string[] };
      expect(got.body.rootSpanIds).toEqual([root.spanId]);
      expect(root.children).toHaveLength(3);
      expect(byName.get("chat gpt-4o-mini")).toMatchObject({
        parentSpanId: root.spanId,
        kind: "client",
        status: "unset",
        scope: "weather-agent",
        resourceAttributes: { "service.name": "weather-app", "deployment.environment": "test" },
        attributes: { "app.custom": "kept", "app.list": [1, 2, 3], "gen_ai.usage.input_tokens": 1000 },
        generation: {
          operation: "chat",
          provider: "openai",
          requestModel: "gpt-4o-mini",
          responseModel: "gpt-4o-mini",
          inputTokens: 1000,
          outputTokens: 500,
          costUsd: (1000 * 0.15 + 500 * 0.6) / 1_000_000,
          inputMessages: INPUT,
          outputMessages: OUTPUT,
        },
      });
      expect(byName.get("openai.chat")).toMatchObject({
        generation: {
          operation: null,
          provider: "openai",
          requestModel: "gpt-4o",
          responseModel: null,
          inputTokens: 200,
          outputTokens: 100,
          costUsd: (200 * 2.5 + 100 * 10) / 1_000_000,
          inputMessages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "Hi" },
          ],
          outputMessages: [{ role: "assistant", content: "Hello!", finish_reason: "stop" }],
        },
      });
      expect(byName.get("chat mystery-model")).toMatchObject({
        status: "error",
        statusMessage: "upstream 503",
        generation: { provider: "acme", requestModel: "mystery-model", inputTokens: 10, costUsd: null },
      });

      // Filters: model, status, name, time.
      const byModel = await call(base, "GET", `/api/traces?model=gpt-4o&session=${session}`, { apiKey: a.apiKey });
      expect(byModel.body.data.map((t: { traceId: string }) => t.traceId)).toEqual([traceId]);
      const ok = await call(base, "GET", `/api/traces?status=ok&session=${session}`, { apiKey: a.apiKey });
      expect(ok.body.data).toEqual([]);
      const later = new Date(Date.now() + 60_000).toISOString();
      const future = await call(base, "GET", `/api/traces?from=${later}`, { apiKey: a.apiKey });
      expect(future.body.data).toEqual([]);
      const named = await call(base, "GET", "/api/traces?name=invoke_agent%20weather", { apiKey: a.apiKey });
      expect(named.body.data.map((t: { traceId: string }) => t.traceId)).toContain(traceId);

      // Another organization's key sees nothing of it.
      const other = await call(base, "GET", "/api/traces", { apiKey: b.apiKey });
      expect(other.body.data).toEqual([]);
      expect((await call(base, "GET", `/api/traces/${traceId}`, { apiKey: b.apiKey })).status).toBe(404);
    });
  }

  it("refuses a key without traces:write, and anonymous callers", async () => {
    const result = await send(
      new JsonExporter({ url: `${base}/otel/v1/traces`, headers: { "x-api-key": noScope.apiKey } }),
      makeSpans("refused"),
    );
    expect(result.code).not.toBe(0);
    expect(result.error?.code).toBe(403);
    const anonymous = await fetch(`${base}/otel/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(anonymous.status).toBe(401);
    expect((await call(base, "GET", "/api/traces?session=refused", { apiKey: a.apiKey })).body.data).toEqual([]);
  });

  it("answers OTLP's partial success for spans without valid ids", async () => {
    const traceId = "5b8efff798038103d269b633813fc60c";
    const body = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                { traceId, spanId: "eee19b7ec3c1b174", name: "kept", startTimeUnixNano: "1", endTimeUnixNano: "2" },
                { traceId: "", spanId: "eee19b7ec3c1b175", name: "refused" },
              ],
            },
          ],
        },
      ],
    };
    const r = await call(base, "POST", "/otel/v1/traces", { apiKey: a.apiKey, body });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ partialSuccess: { rejectedSpans: "1", errorMessage: "a span without a valid trace id" } });
    const got = await call(base, "GET", `/api/traces/${traceId}`, { apiKey: a.apiKey });
    expect(got.body.spans.map((s: { name: string }) => s.name)).toEqual(["kept"]);
  });

  it("refuses a body that is not an OTLP export, or one over 10,000 spans, and stores nothing", async () => {
    const post = (body: string | Uint8Array, type: string) =>
      fetch(`${base}/otel/v1/traces`, {
        method: "POST",
        headers: { "content-type": type, "x-api-key": a.apiKey },
        body,
      });
    for (const [body, type] of [
      ["{not json", "application/json"],
      ['{"resourceSpans": 7}', "application/json"],
      [new Uint8Array([0xff, 0xff, 0xff, 0xff]), "application/x-protobuf"],
    ] as const) {
      const r = await post(body, type);
      expect(r.status).toBe(400);
      const error = ((await r.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe("invalid_argument");
      expect(error.message).toMatch(/^the body is not an OTLP trace export/);
    }
    const traceId = "6c9f0a8e1d2b3c4d5e6f708192a3b4c5";
    const span = (i: number) => ({
      traceId,
      spanId: (i + 1).toString(16).padStart(16, "0"),
      name: "one of many",
      startTimeUnixNano: "1",
      endTimeUnixNano: "2",
    });
    const many = { resourceSpans: [{ scopeSpans: [{ spans: Array.from({ length: 10_001 }, (_, i) => span(i)) }] }] };
    const r = await post(JSON.stringify(many), "application/json");
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { message: string } }).error.message).toBe(
      "at most 10000 spans per request; this one holds 10001",
    );
    expect((await call(base, "GET", `/api/traces/${traceId}`, { apiKey: a.apiKey })).status).toBe(404);
  });

  it('limits the body after decompression (docs/observability.md "Ingestion")', async () => {
    const bomb = gzipSync(Buffer.alloc(5 * 1024 * 1024, 32));
    const r = await fetch(`${base}/otel/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/x-protobuf", "content-encoding": "gzip", "x-api-key": a.apiKey },
      body: bomb,
    });
    expect(bomb.length).toBeLessThan(64 * 1024);
    expect(r.status).toBe(413);
  });
});
