/**
 * Kiln's own runs as traces (docs/observability.md "Kiln's runs as traces") in both run modes: a
 * trace started by the OpenTelemetry SDK in the test continues through a Kiln run via W3C
 * `traceparent` (REST and OpenAI-compatible routes), and reads back as one trace with Kiln's spans
 * under the caller's span.
 */

import { createTestClient } from "@kiln/testing/test-client";
import { context, trace } from "@opentelemetry/api";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, eventually, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { EXPORTERS, memoryTracer, sendSpans, TRACE_MODES } from "./support/trace-modes.js";

interface SpanView {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  attributes: Record<string, unknown>;
  generation: Record<string, unknown> | null;
  toolCall: Record<string, unknown> | null;
  children: string[];
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

describe.each(TRACE_MODES)("Kiln's runs as traces ($name)", (mode) => {
  let stop: () => Promise<void>;
  let base: string;
  let flow: FlowResult;
  let promptId: string;
  let skillName: string;

  beforeAll(async () => {
    const started = await mode.start();
    stop = started.stop;
    base = started.baseUrl;
    flow = await runIdentityFlow(base, ["prompts:read", "skills:read", "runs:write", "traces:read", "traces:write"]);
    const client = createTestClient(base);
    const { token, organizationId } = flow;
    const greeting = await client.createPublishedPrompt(token, organizationId, {
      model: "local/echo",
      systemPrompt: "Greet {{person}} warmly.",
      variablesSchema: { type: "object", properties: { person: { type: "string" } }, required: ["person"] },
    });
    promptId = greeting.prompt.id;
    const skill = await client.createSkill(token, organizationId, { name: `Greeter ${Date.now()}` });
    await client.replaceSkillPrompts(token, skill.draftVersionId ?? "", [{ promptId, alias: "greet" }]);
    await client.publishSkill(token, skill.id);
    skillName = skill.name;
  }, 180_000);

  afterAll(async () => {
    await stop?.();
  });

  /** The trace once it holds `count` spans (Kiln stores its spans in the background). */
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

  /** A caller's span, its traceparent, and a way to end it and send it to Kiln over OTLP. */
  function callerSpan(name: string) {
    const { provider, memory } = memoryTracer("checkout-app");
    const span = provider.getTracer("checkout").startSpan(name);
    const { traceId, spanId } = span.spanContext();
    return {
      traceId,
      spanId,
      traceparent: `00-${traceId}-${spanId}-01`,
      async end() {
        span.end();
        expect(await sendSpans(EXPORTERS[1][1](base, flow.apiKey), memory.getFinishedSpans())).toMatchObject({
          code: 0,
        });
      },
    };
  }

  it("continues the caller's trace through a REST prompt run", async () => {
    const caller = callerSpan("checkout");
    const r = await call(base, "POST", `/api/prompts/${promptId}/run`, {
      apiKey: flow.apiKey,
      headers: { traceparent: caller.traceparent },
      body: { organizationId: flow.organizationId, variables: { person: "Ada" } },
    });
    expect(r.status).toBe(201);
    const answered = TRACEPARENT.exec(r.headers.get("traceparent") ?? "");
    expect(answered?.[1]).toBe(caller.traceId);
    expect(answered?.[2]).not.toBe(caller.spanId);
    await caller.end();

    const t = await traceOf(caller.traceId, 3);
    const byName = new Map(t.spans.map((s) => [s.name, s]));
    const root = byName.get("checkout") as SpanView;
    expect(t.rootSpanIds).toEqual([root.spanId]);
    expect(t.name).toBe("checkout");
    const run = byName.get(`run_prompt ${promptId}`) as SpanView;
    expect(run).toMatchObject({
      spanId: answered?.[2],
      parentSpanId: caller.spanId,
      attributes: { "kiln.run.id": r.body.id, "kiln.run.kind": "prompt", "kiln.prompt.id": promptId },
      generation: null,
    });
    expect(byName.get("chat echo")).toMatchObject({
      parentSpanId: run.spanId,
      generation: {
        operation: "chat",
        provider: "local",
        requestModel: "echo",
        inputTokens: r.body.usage.inputTokens,
        outputTokens: r.body.usage.outputTokens,
        costUsd: 0,
      },
    });
  });

  it("continues the caller's trace through an OpenAI-compatible skill run, with its steps", async () => {
    const caller = callerSpan("chat-ui");
    const openai = new OpenAI({ apiKey: flow.apiKey, baseURL: `${base}/v1`, maxRetries: 0 });
    const { data, response } = await openai.chat.completions
      .create({ model: `kiln/skill/${skillName}`, messages: [], variables: { person: "Grace" } } as never, {
        headers: { traceparent: caller.traceparent },
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toContain("Grace");
    const answered = TRACEPARENT.exec(response.headers.get("traceparent") ?? "");
    expect(answered?.[1]).toBe(caller.traceId);
    await caller.end();

    const t = await traceOf(caller.traceId, 4);
    const run = t.spans.find((s) => s.name.startsWith("run_skill ")) as SpanView;
    expect(run).toMatchObject({ spanId: answered?.[2], parentSpanId: caller.spanId });
    expect(run.attributes["kiln.run.kind"]).toBe("skill");
    const step = t.spans.find((s) => s.name === "step greet") as SpanView;
    expect(step).toMatchObject({ parentSpanId: run.spanId, attributes: { "kiln.step.id": "greet" } });
    expect(t.spans.find((s) => s.parentSpanId === step.spanId)).toMatchObject({
      name: "chat echo",
      generation: { provider: "local", requestModel: "echo", costUsd: 0 },
    });
  });

  it("records the label a run resolved through, which the trace list filters on", async () => {
    const r = await call(base, "POST", `/api/prompts/${promptId}/run`, {
      apiKey: flow.apiKey,
      body: { organizationId: flow.organizationId, label: "production", variables: { person: "Hedy" } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.label).toBe("production");
    const traceId = TRACEPARENT.exec(r.headers.get("traceparent") ?? "")?.[1] as string;
    const t = await traceOf(traceId, 2);
    expect(t.spans[0]?.attributes["kiln.run.label"]).toBe("production");
    const listed = await call(base, "GET", "/api/traces?label=production&limit=50", { apiKey: flow.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body.data.find((x: { traceId: string }) => x.traceId === traceId)).toMatchObject({
      runId: r.body.id,
      label: "production",
    });
  });

  it("starts a trace of its own without traceparent, and ignores a malformed one", async () => {
    for (const headers of [{}, { traceparent: "00-zz-1-01" }] as Record<string, string>[]) {
      const r = await call(base, "POST", `/api/prompts/${promptId}/run`, {
        apiKey: flow.apiKey,
        headers,
        body: { organizationId: flow.organizationId, variables: { person: "Linus" } },
      });
      expect(r.status).toBe(201);
      const answered = TRACEPARENT.exec(r.headers.get("traceparent") ?? "");
      expect(answered).not.toBeNull();
      const t = await traceOf(answered?.[1] as string, 2);
      expect(t).toMatchObject({ name: `run_prompt ${promptId}`, rootSpanIds: [answered?.[2]] });
      expect(t.spans[0]?.attributes["kiln.run.id"]).toBe(r.body.id);
    }
    // The run's trace is the organization's: another one does not see it.
    const other = await runIdentityFlow(base, ["traces:read"]);
    expect((await call(base, "GET", "/api/traces", { apiKey: other.apiKey })).body.data).toEqual([]);
  });
  it("keeps a run's own trace whole when spans sent later join it under the run's span", async () => {
    const r = await call(base, "POST", `/api/prompts/${promptId}/run`, {
      apiKey: flow.apiKey,
      body: { organizationId: flow.organizationId, variables: { person: "Barbara" } },
    });
    expect(r.status).toBe(201);
    const [, traceId, runSpanId] = TRACEPARENT.exec(r.headers.get("traceparent") ?? "") ?? [];
    const before = await traceOf(traceId as string, 2);
    // The caller continues the answered traceparent: its span is the run's child.
    const { provider, memory } = memoryTracer("billing-app");
    const parent = trace.setSpanContext(context.active(), {
      traceId: traceId as string,
      spanId: runSpanId as string,
      traceFlags: 1,
      isRemote: true,
    });
    provider.getTracer("billing").startSpan("bill", {}, parent).end();
    expect(await sendSpans(EXPORTERS[0][1](base, flow.apiKey), memory.getFinishedSpans())).toMatchObject({ code: 0 });

    const t = await traceOf(traceId as string, 3);
    expect(t).toMatchObject({ name: `run_prompt ${promptId}`, rootSpanIds: [runSpanId], spanCount: 3 });
    // The run's spans are the ones read before, ids and all.
    for (const s of before.spans) expect(t.spans.find((x) => x.spanId === s.spanId)).toMatchObject({ name: s.name });
    expect(t.spans.find((s) => s.name === "bill")?.parentSpanId).toBe(runSpanId);
    const listed = await call(base, "GET", "/api/traces?limit=100", { apiKey: flow.apiKey });
    expect(listed.body.data.find((x: { traceId: string }) => x.traceId === traceId)).toMatchObject({
      runId: r.body.id,
      spanCount: 3,
    });
  });
});

describe("Kiln's runs with RUN_TRACES=off (embedded)", () => {
  it("records no trace of a run, and still answers its traceparent", async () => {
    const started = await TRACE_MODES[0]?.start({ runTraces: false });
    try {
      const base = started?.baseUrl as string;
      const flow = await runIdentityFlow(base, ["prompts:read", "runs:write", "traces:read"]);
      const { prompt } = await createTestClient(base).createPublishedPrompt(flow.token, flow.organizationId, {
        model: "local/echo",
        systemPrompt: "Greet {{person}}.",
        variablesSchema: { type: "object", properties: { person: { type: "string" } }, required: ["person"] },
      });
      const r = await call(base, "POST", `/api/prompts/${prompt.id}/run`, {
        apiKey: flow.apiKey,
        body: { organizationId: flow.organizationId, variables: { person: "Joan" } },
      });
      expect(r.status).toBe(201);
      const traceId = TRACEPARENT.exec(r.headers.get("traceparent") ?? "")?.[1];
      expect(traceId).toBeDefined();
      // Well past the recorder's flush delay (250 ms): a recorded trace would be readable by now.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect((await call(base, "GET", `/api/traces/${traceId}`, { apiKey: flow.apiKey })).status).toBe(404);
      expect((await call(base, "GET", "/api/traces", { apiKey: flow.apiKey })).body.data).toEqual([]);
    } finally {
      await started?.stop();
    }
  }, 60_000);
});
