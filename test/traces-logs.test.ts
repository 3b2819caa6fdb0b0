/**
 * GenAI messages sent as OTLP log records (docs/observability.md "Logs"): the official
 * `@opentelemetry/instrumentation-openai` (pinned in test/package.json) writes a chat call's
 * messages as log records emitted in its span; with `@opentelemetry/sdk-logs` and the OTLP log
 * exporters pointed at Kiln's `/otel/v1/logs`, the trace shows the call's input and output
 * messages, whether the logs arrive before the span or after it. The app calls the OpenAI stub
 * through the official `openai` package.
 */
import { gzipSync } from "node:zlib";
import { startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPLogExporter as JsonLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as ProtoLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OpenAIInstrumentation } from "@opentelemetry/instrumentation-openai";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  InMemoryLogRecordExporter,
  LoggerProvider,
  type ReadableLogRecord,
  SimpleLogRecordProcessor,
} from "@opentelemetry/sdk-logs";
import OpenAI, * as openaiModule from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { price } from "./support/genai-spans.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { EXPORTERS, memoryTracer, sendSpans, TRACE_MODES } from "./support/trace-modes.js";

const LOG_EXPORTERS = [
  [
    "protobuf, gzip",
    (base: string, key: string) =>
      new ProtoLogExporter({
        url: `${base}/otel/v1/logs`,
        headers: { authorization: `Bearer ${key}` },
        compression: "gzip" as never,
      }),
  ],
  [
    "JSON",
    (base: string, key: string) => new JsonLogExporter({ url: `${base}/otel/v1/logs`, headers: { "x-api-key": key } }),
  ],
] as const;

async function sendLogs(exporter: ProtoLogExporter | JsonLogExporter, records: ReadableLogRecord[]) {
  const result = await new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(records, resolve));
  await exporter.shutdown();
  return result;
}

/** One chat call of the app through instrumentation-openai: its spans and log records, in memory. */
async function instrumentedChat(stubUrl: string) {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const { provider, memory } = memoryTracer("openai-app");
  const logs = new InMemoryLogRecordExporter();
  const loggerProvider = new LoggerProvider({
    resource: resourceFromAttributes({ "service.name": "openai-app" }),
    processors: [new SimpleLogRecordProcessor({ exporter: logs })],
  });
  const instrumentation = new OpenAIInstrumentation({ captureMessageContent: true });
  instrumentation.setTracerProvider(provider);
  instrumentation.setLoggerProvider(loggerProvider);
  // The package's own patch, applied to the module this test imports (as its import hook would).
  for (const definition of instrumentation.getModuleDefinitions()) definition.patch?.(openaiModule as never);
  try {
    const client = new OpenAI({ apiKey: "sk-stub", baseURL: stubUrl, maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "Answer briefly." },
        { role: "user", content: "Hello" },
      ],
    });
    expect(answer.choices[0]?.message.content).toBe("Hi there.");
  } finally {
    for (const definition of instrumentation.getModuleDefinitions()) definition.unpatch?.(openaiModule as never);
    instrumentation.disable();
  }
  const spans = memory.getFinishedSpans();
  const records = logs.getFinishedLogRecords();
  return { spans, records, traceId: spans[0]?.spanContext().traceId as string };
}

describe.each(TRACE_MODES)("GenAI events as OTLP log records ($name)", (mode) => {
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

  it.each([
    ["the span first, then its logs (protobuf, gzip)", "spans-first", 0],
    ["the logs first, then their span (JSON)", "logs-first", 1],
  ] as const)("shows instrumentation-openai's messages: %s", async (_title, order, exporter) => {
    const stub = await startOpenAIStub({ apiKey: "sk-stub" });
    try {
      stub.script(stubReply.text("Hi there.", { usage: { prompt_tokens: 14, completion_tokens: 3 } }));
      const { spans, records, traceId } = await instrumentedChat(stub.baseUrl);
      // The package's own shape: messages as log records in the span, none on the span itself.
      expect(records.map((r) => r.attributes["event.name"])).toEqual([
        "gen_ai.system.message",
        "gen_ai.user.message",
        "gen_ai.choice",
      ]);
      expect(spans[0]?.events).toEqual([]);
      const sendTheLogs = async () =>
        expect(await sendLogs(LOG_EXPORTERS[exporter][1](base, a.apiKey), records)).toMatchObject({ code: 0 });
      const sendTheSpans = async () =>
        expect(await sendSpans(EXPORTERS[exporter][1](base, a.apiKey), spans)).toMatchObject({ code: 0 });
      if (order === "spans-first") {
        await sendTheSpans();
        await sendTheLogs();
      } else {
        await sendTheLogs();
        await sendTheSpans();
      }

      const got = await call(base, "GET", `/api/traces/${traceId}`, { apiKey: a.apiKey });
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({ inputTokens: 14, outputTokens: 3, models: ["gpt-4o-mini"] });
      expect(got.body.costUsd).toBeCloseTo(price("gpt-4o-mini", 14, 3), 12);
      const [span] = got.body.spans;
      expect(span.generation).toMatchObject({
        inputMessages: [
          { role: "system", content: "Answer briefly." },
          { role: "user", content: "Hello" },
        ],
        outputMessages: [{ role: "assistant", content: "Hi there.", finish_reason: "stop", index: 0 }],
        finishReasons: ["stop"],
      });
      // The records as they came, beside the span's own events.
      expect(span.logEvents.map((e: { name: string }) => e.name)).toEqual([
        "gen_ai.system.message",
        "gen_ai.user.message",
        "gen_ai.choice",
      ]);
      expect(span.logEvents[1]).toMatchObject({ body: { content: "Hello" } });
      // What the instrumentation writes that Kiln does not map is listed (docs/observability.md "Unmapped attributes").
      expect(span.unmappedAttributes).toContain("server.address");
      expect(span.unmappedAttributes).not.toContain("gen_ai.request.model");

      // An exporter's retry of the same logs joins nothing twice.
      await sendTheLogs();
      const again = await call(base, "GET", `/api/traces/${traceId}`, { apiKey: a.apiKey });
      expect(again.body.spans[0].generation.inputMessages).toHaveLength(2);
      // A retry of the span keeps the messages joined to it.
      await sendTheSpans();
      const retried = await call(base, "GET", `/api/traces/${traceId}`, { apiKey: a.apiKey });
      expect(retried.body.spans[0].generation.outputMessages).toHaveLength(1);
      expect(retried.body.spanCount).toBe(1);
    } finally {
      await stub.close();
    }
  });

  it("answers OTLP's partial success for records that are not GenAI events of a span", async () => {
    const traceId = "5b8efff798038103d269b633813fc60c";
    const spanId = "eee19b7ec3c1b174";
    const body = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "app" } }] },
          scopeLogs: [
            {
              logRecords: [
                { timeUnixNano: "1700000000000000000", body: { stringValue: "a plain log line" }, traceId, spanId },
                {
                  timeUnixNano: "1700000000000000000",
                  eventName: "gen_ai.user.message",
                  body: { kvlistValue: { values: [{ key: "content", value: { stringValue: "Hi" } }] } },
                },
                {
                  timeUnixNano: "1700000000000000000",
                  eventName: "gen_ai.user.message",
                  body: { kvlistValue: { values: [{ key: "content", value: { stringValue: "Hi" } }] } },
                  traceId,
                  spanId,
                },
              ],
            },
          ],
        },
      ],
    };
    const r = await fetch(`${base}/otel/v1/logs`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": a.apiKey },
      body: JSON.stringify(body),
    });
    expect(r.status).toBe(200);
    const answer = (await r.json()) as { partialSuccess: { rejectedLogRecords: string; errorMessage: string } };
    expect(answer.partialSuccess.rejectedLogRecords).toBe("2");
    expect(answer.partialSuccess.errorMessage).toContain("not a GenAI event");

    // Every record a GenAI event of a span: no partial success, gzip accepted.
    const ok = await fetch(`${base}/otel/v1/logs`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip", authorization: `Bearer ${a.apiKey}` },
      body: gzipSync(
        JSON.stringify({
          resourceLogs: [{ scopeLogs: [{ logRecords: [body.resourceLogs[0]?.scopeLogs[0]?.logRecords[2]] }] }],
        }),
      ),
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({});
  });

  it("refuses as the traces route does: no credentials, a user's token, a body too large or not OTLP", async () => {
    const post = (headers: Record<string, string>, body: string | Uint8Array) =>
      fetch(`${base}/otel/v1/logs`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
      });
    expect((await post({}, "{}")).status).toBe(401);
    expect((await post({ authorization: `Bearer ${a.token}` }, "{}")).status).toBe(403);
    const large = await post({ "x-api-key": a.apiKey }, `{"resourceLogs":[],"x":"${"a".repeat(4 * 1024 * 1024)}"}`);
    expect(large.status).toBe(413);
    const garbage = await post({ "x-api-key": a.apiKey }, '{"resourceLogs": 3}');
    expect(garbage.status).toBe(400);
    expect(((await garbage.json()) as { error: { message: string } }).error.message).toContain(
      "not an OTLP logs export",
    );
    const reader = await runIdentityFlow(base, ["traces:read"]);
    const denied = await post({ "x-api-key": reader.apiKey }, "{}");
    expect(denied.status).toBe(403);
  });
});
