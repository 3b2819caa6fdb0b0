/**
 * Kiln's run spans leaving for an OTLP endpoint, an agent run as one trace, and a streamed answer's
 * `traceparent` (docs/observability.md "Export", "Kiln's runs as traces") in both run modes. The
 * endpoint is a real HTTP server decoding the vendored OTLP protos; its first answer is a 503, which
 * the exporter retries.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fromBinary } from "@bufbuild/protobuf";
import { type ExportTraceServiceRequest, ExportTraceServiceRequestSchema } from "@kiln/proto/otlp/trace-service";
import { createPublishedAgent } from "@kiln/testing/agent-fixture";
import { createTestClient } from "@kiln/testing/test-client";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, eventually, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { TRACE_MODES } from "./support/trace-modes.js";

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: ExportTraceServiceRequest;
}

/** An OTLP/HTTP receiver: answers 503 to the first request, then 200, keeping what it decoded. */
async function startReceiver() {
  const received: Received[] = [];
  let requests = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests++;
      if (requests === 1) {
        res.writeHead(503).end();
        return;
      }
      const body = fromBinary(ExportTraceServiceRequestSchema, Buffer.concat(chunks));
      received.push({ path: req.url ?? "", headers: req.headers, body });
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/collector`,
    received,
    requests: () => requests,
    /** The exported spans of one trace, with their resource attributes. */
    spansOf(traceId: string) {
      return received.flatMap((r) =>
        r.body.resourceSpans.flatMap((rs) =>
          rs.scopeSpans.flatMap((ss) =>
            ss.spans
              .filter((s) => Buffer.from(s.traceId).toString("hex") === traceId)
              .map((s) => ({
                name: s.name,
                spanId: Buffer.from(s.spanId).toString("hex"),
                parentSpanId: Buffer.from(s.parentSpanId).toString("hex"),
                attributes: Object.fromEntries(s.attributes.map((a) => [a.key, a.value?.value.value])),
                resource: Object.fromEntries((rs.resource?.attributes ?? []).map((a) => [a.key, a.value?.value.value])),
              })),
          ),
        ),
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

describe.each(TRACE_MODES)("run spans exported and nested ($name)", (mode) => {
  let stop: () => Promise<void>;
  let base: string;
  let flow: FlowResult;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let promptId: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    const started = await mode.start({
      runTraces: true,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20collector-secret,x-tenant=kiln",
      },
    });
    stop = started.stop;
    base = started.baseUrl;
    flow = await runIdentityFlow(base, ["prompts:read", "runs:write", "traces:read"]);
    const prompt = await createTestClient(base).createPublishedPrompt(flow.token, flow.organizationId, {
      model: "local/echo",
      systemPrompt: "Say hello to {{person}}.",
      variablesSchema: { type: "object", properties: { person: { type: "string" } }, required: ["person"] },
    });
    promptId = prompt.prompt.id;
  }, 180_000);

  afterAll(async () => {
    await stop?.();
    await receiver?.close();
  });

  async function traceOf(traceId: string, count: number) {
    let body: { name: string; spanCount: number; rootSpanIds: string[]; spans: SpanView[] } | undefined;
    await eventually(async () => {
      const r = await call(base, "GET", `/api/traces/${traceId}`, { apiKey: flow.apiKey });
      body = r.body;
      // The spans are written first, then the trace's summary: wait for both.
      return r.status === 200 && r.body.spans.length >= count && r.body.spanCount >= count;
    }, 15_000);
    return body as NonNullable<typeof body>;
  }

  it("sends a run's spans to the OTLP endpoint in the caller's trace, retrying a 503", async () => {
    const r = await call(base, "POST", `/api/prompts/${promptId}/run`, {
      apiKey: flow.apiKey,
      headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      body: { organizationId: flow.organizationId, variables: { person: "Ada" } },
    });
    expect(r.status).toBe(201);
    const rootSpanId = TRACEPARENT.exec(r.headers.get("traceparent") ?? "")?.[2];
    await eventually(async () => receiver.spansOf(CALLER_TRACE).length >= 2, 20_000);
    expect(receiver.requests()).toBeGreaterThan(receiver.received.length);
    const spans = receiver.spansOf(CALLER_TRACE);
    const root = spans.find((s) => s.name === `run_prompt ${promptId}`);
    expect(root).toMatchObject({
      spanId: rootSpanId,
      parentSpanId: CALLER_SPAN,
      attributes: { "kiln.run.id": r.body.id, "kiln.run.kind": "prompt" },
      resource: { "service.name": "kiln", "kiln.organization.id": flow.organizationId },
    });
    expect(spans.find((s) => s.name === "chat echo")).toMatchObject({
      parentSpanId: rootSpanId,
      attributes: { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "local" },
    });
    const first = receiver.received[0] as Received;
    expect(first.path).toBe("/collector/v1/traces");
    expect(first.headers).toMatchObject({
      authorization: "Bearer collector-secret",
      "x-tenant": "kiln",
      "content-type": "application/x-protobuf",
    });
  });

  /** The agent run's trace, checked whole: its steps, each prompt step's child run under its step span. */
  async function expectAgentTrace(r: Awaited<ReturnType<typeof call>>, agent: { agentId: string; toolKey: string }) {
    const [, traceId, rootSpanId] = TRACEPARENT.exec(r.headers.get("traceparent") ?? "") ?? [];
    // The agent, its three steps, the weather tool, two child runs and their two model calls.
    const t = await traceOf(traceId as string, 9);
    expect(t).toMatchObject({ name: `invoke_agent ${agent.agentId}`, rootSpanIds: [rootSpanId], spanCount: 9 });
    expect(t.spans.find((s) => s.spanId === rootSpanId)?.attributes["kiln.run.id"]).toBe(r.body.id);
    const step = (id: string) => t.spans.find((s) => s.name === `step ${id}`) as SpanView;
    for (const id of ["draft", "weather", "polish"]) expect(step(id).parentSpanId).toBe(rootSpanId);
    const children = t.spans.filter((s) => s.name.startsWith("run_prompt "));
    expect(children.map((c) => c.parentSpanId).sort()).toEqual([step("draft").spanId, step("polish").spanId].sort());
    for (const child of children) {
      expect(
        step(child.parentSpanId === step("draft").spanId ? "draft" : "polish").attributes["kiln.step.run_id"],
      ).toBe(child.attributes["kiln.run.id"]);
      // The model call is the child run's, once: the trace's totals count it once.
      const calls = t.spans.filter((s) => s.parentSpanId === child.spanId);
      expect(calls.map((c) => c.name)).toEqual(["chat echo"]);
    }
    expect(t.spans.filter((s) => s.name === "chat echo")).toHaveLength(2);
    expect(t.spans.find((s) => s.parentSpanId === step("weather").spanId)?.name).toBe(`execute_tool ${agent.toolKey}`);
    // The child runs are no traces of their own.
    const listed = await call(base, "GET", "/api/traces?limit=100", { apiKey: flow.apiKey });
    const childIds = new Set(children.map((c) => c.attributes["kiln.run.id"]));
    const others = await Promise.all(
      listed.body.data
        .filter((x: { traceId: string }) => x.traceId !== traceId)
        .map(async (x: { traceId: string }) => (await traceOf(x.traceId, 1)).spans),
    );
    expect(others.flat().filter((s) => childIds.has(s.attributes["kiln.run.id"] as string))).toEqual([]);
  }

  it("records an agent run as one trace: each prompt step's child run under its step span", async () => {
    const api = createTestClient(base);
    const agent = await createPublishedAgent(api, flow.token, flow.organizationId);
    const r = await call(base, "POST", `/api/agents/${agent.agentId}/run`, {
      token: flow.token,
      body: { organizationId: flow.organizationId, inputs: { topic: "kilns", city: "Delft" } },
    });
    expect(r.status).toBe(201);
    await expectAgentTrace(r, agent);
  });

  it("records an asynchronous agent run as one trace too, in the trace its 202 answered", async () => {
    const api = createTestClient(base);
    const agent = await createPublishedAgent(api, flow.token, flow.organizationId);
    const r = await call(base, "POST", `/api/agents/${agent.agentId}/run`, {
      token: flow.token,
      body: { organizationId: flow.organizationId, inputs: { topic: "kilns", city: "Leiden" }, mode: "async" },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body.status).toBe("running");
    await expectAgentTrace(r, agent);
  });

  it("answers a streamed chat completion with the run's traceparent", async () => {
    const openai = new OpenAI({ apiKey: flow.apiKey, baseURL: `${base}/v1`, maxRetries: 0 });
    const caller = `00-${CALLER_TRACE.replace(/^4/, "5")}-${CALLER_SPAN}-01`;
    const { data: stream, response } = await openai.chat.completions
      .create({ model: `kiln/${promptId}`, messages: [], stream: true, variables: { person: "Grace" } } as never, {
        headers: { traceparent: caller },
      })
      .withResponse();
    let text = "";
    for await (const chunk of stream as unknown as AsyncIterable<{ choices: { delta: { content?: string } }[] }>)
      text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toContain("Grace");
    const answered = TRACEPARENT.exec(response.headers.get("traceparent") ?? "");
    expect(answered?.[1]).toBe(CALLER_TRACE.replace(/^4/, "5"));
    const t = await traceOf(answered?.[1] as string, 2);
    expect(t.spans.find((s) => s.spanId === answered?.[2])).toMatchObject({
      name: `run_prompt ${promptId}`,
      parentSpanId: CALLER_SPAN,
    });
  });
});

interface SpanView {
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
}
