/**
 * Traces for the trace and session tests (API and console), posted as OTLP/JSON with an API key
 * holding `traces:write`: a two-turn chat session, a second user's failed unpriced turn, a Kiln run.
 */
import { randomBytes } from "node:crypto";

type Value = string | number;
export interface SeedSpan {
  name: string;
  parent?: string;
  /** Milliseconds after the trace's start, and the span's duration. */
  at: number;
  ms: number;
  error?: string;
  attributes?: Record<string, Value>;
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const nanos = (ms: number) => `${BigInt(Math.round(ms)) * 1_000_000n}`;
const otlpValue = (v: Value) => (typeof v === "number" ? { intValue: String(v) } : { stringValue: v });

/** One trace's OTLP/JSON body: `spans` by name, `parent` naming another of them. */
export function otlpTrace(start: number, spans: SeedSpan[], traceId = hex(16)) {
  const ids = new Map(spans.map((s) => [s.name, hex(8)]));
  return {
    traceId,
    body: {
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "support-bot" } }] },
          scopeSpans: [
            {
              scope: { name: "support-bot" },
              spans: spans.map((s) => ({
                traceId,
                spanId: ids.get(s.name),
                ...(s.parent ? { parentSpanId: ids.get(s.parent) } : {}),
                name: s.name,
                kind: s.parent ? 3 : 2,
                startTimeUnixNano: nanos(start + s.at),
                endTimeUnixNano: nanos(start + s.at + s.ms),
                attributes: Object.entries(s.attributes ?? {}).map(([key, v]) => ({ key, value: otlpValue(v) })),
                ...(s.error ? { status: { code: 2, message: s.error } } : {}),
              })),
            },
          ],
        },
      ],
    },
  };
}

const chat = (model: string, input: number, output: number, messages: { in: unknown; out: unknown }) => ({
  "gen_ai.operation.name": "chat",
  "gen_ai.provider.name": "openai",
  "gen_ai.request.model": model,
  "gen_ai.usage.input_tokens": input,
  "gen_ai.usage.output_tokens": output,
  "gen_ai.input.messages": JSON.stringify(messages.in),
  "gen_ai.output.messages": JSON.stringify(messages.out),
});
const text = (role: string, content: string) => ({ role, parts: [{ type: "text", content }] });

/** The seeded traces; `tag` keeps sessions, users and labels apart between runs against one store. */
export function seedTraces(tag: string, start = Date.now() - 10 * 60_000) {
  const session = `chat-${tag}`;
  const otherSession = `other-${tag}`;
  const user = `ada-${tag}`;
  const otherUser = `bob-${tag}`;
  const label = `nightly-${tag}`;
  const first = otlpTrace(start, [
    {
      name: "support turn",
      at: 0,
      ms: 900,
      attributes: {
        "session.id": session,
        "user.id": user,
        "input.value": "Where is my order?",
        "output.value": "It ships tomorrow.",
      },
    },
    {
      name: "lookup order",
      parent: "support turn",
      at: 50,
      ms: 200,
      attributes: {
        "gen_ai.tool.name": "lookup_order",
        "gen_ai.tool.call.arguments": '{"order":"A-1"}',
        "gen_ai.tool.call.result": '{"ships":"tomorrow"}',
      },
    },
    {
      name: "chat gpt-4o-mini",
      parent: "support turn",
      at: 300,
      ms: 500,
      attributes: {
        // Attributes of no convention Kiln maps: listed as the span's unmapped attributes.
        "server.address": "api.openai.com",
        "app.tenant": "acme",
        ...chat("gpt-4o-mini", 1000, 500, {
          in: [text("system", "Be kind."), text("user", "Where is my order?")],
          out: [
            {
              role: "assistant",
              parts: [
                { type: "tool_call", id: "call_1", name: "lookup_order", arguments: { order: "A-1" } },
                { type: "text", content: "It ships tomorrow." },
              ],
            },
          ],
        }),
      },
    },
  ]);
  const second = otlpTrace(start + 60_000, [
    { name: "support turn", at: 0, ms: 700, attributes: { "gen_ai.conversation.id": session, "enduser.id": user } },
    {
      name: "chat gpt-4o",
      parent: "support turn",
      at: 100,
      ms: 500,
      attributes: chat("gpt-4o", 200, 100, {
        in: [text("user", "Can I change the address?")],
        out: [text("assistant", "Yes, until it ships.")],
      }),
    },
  ]);
  const failed = otlpTrace(start + 120_000, [
    {
      name: "escalate",
      at: 0,
      ms: 400,
      attributes: { "ai.telemetry.metadata.sessionId": otherSession, "ai.telemetry.metadata.userId": otherUser },
    },
    {
      name: "chat mystery-model",
      parent: "escalate",
      at: 10,
      ms: 300,
      error: "upstream 503",
      attributes: chat("mystery-model", 10, 5, { in: [text("user", "Help")], out: [] }),
    },
  ]);
  const run = otlpTrace(start + 180_000, [
    {
      name: "run_prompt prm_1",
      at: 0,
      ms: 100,
      attributes: { "kiln.run.id": `run_${"0".repeat(31)}1`, "kiln.run.label": label },
    },
  ]);
  return {
    session,
    otherSession,
    user,
    otherUser,
    label,
    traces: { first, second, failed, run },
    costs: { first: (1000 * 0.15 + 500 * 0.6) / 1e6, second: (200 * 2.5 + 100 * 10) / 1e6 },
  };
}

/** Posts each trace to `/otel/v1/traces` with the key; throws unless every one is stored. */
export async function postTraces(base: string, apiKey: string, traces: { body: unknown }[]) {
  for (const t of traces) {
    const r = await fetch(`${base}/otel/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": apiKey },
      body: JSON.stringify(t.body),
    });
    if (r.status !== 200) throw new Error(`OTLP answered ${r.status}: ${await r.text()}`);
  }
}
