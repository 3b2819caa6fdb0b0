import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fromBinary } from "@bufbuild/protobuf";
import { createLogger } from "@kiln/kit/logger";
import { ExportTraceServiceRequestSchema } from "@kiln/proto/otlp/trace-service";
import { afterEach, describe, expect, it } from "vitest";
import { loadTraceExportConfig } from "./otlp-export-config.js";
import { createOtlpExporter } from "./otlp-exporter.js";
import type { SpanDoc } from "./trace-store.js";

const logger = createLogger({ name: "test", level: "silent" });

const span = (i: number): SpanDoc => ({
  _id: `org_a:${"a".repeat(32)}:${i}`,
  organizationId: i % 2 === 0 ? "org_a" : "org_b",
  traceId: "a".repeat(32),
  spanId: i.toString(16).padStart(16, "0"),
  parentSpanId: i === 1 ? "" : "0000000000000001",
  name: `span ${i}`,
  kind: "client",
  startTime: new Date(1_000),
  endTime: new Date(2_000),
  status: i === 3 ? "error" : "ok",
  statusMessage: i === 3 ? "boom" : "",
  attributes: JSON.stringify({ "gen_ai.usage.input_tokens": 12, "x.ratio": 0.5, "x.flag": true, "x.list": ["a"] }),
  resourceAttributes: JSON.stringify({ "service.name": "kiln" }),
  events: "[]",
  scopeName: "kiln",
  sessionId: "",
  generation: null,
});

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A real OTLP/HTTP endpoint answering each request with the next status of `statuses` (then 200). */
async function endpoint(statuses: number[]) {
  const bodies: ReturnType<typeof fromBinary<typeof ExportTraceServiceRequestSchema>>[] = [];
  let requests = 0;
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const status = statuses[requests++] ?? 200;
      if (status === 200) bodies.push(fromBinary(ExportTraceServiceRequestSchema, Buffer.concat(chunks)));
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  return { url, bodies, requests: () => requests };
}

const options = (url: string) => ({ url, headers: {}, timeoutMs: 2_000, logger, backoffMs: 10 });

describe("OTLP export of run spans", () => {
  it("sends spans as OTLP protobuf in batches, grouped by organization, retrying a 503", async () => {
    const ep = await endpoint([503]);
    const exporter = createOtlpExporter({ ...options(ep.url), maxBatch: 2 });
    exporter.enqueue([]);
    exporter.enqueue([span(1), span(2), span(3)]);
    await exporter.flush();
    expect(exporter.counts()).toEqual({ sent: 3, dropped: 0, failed: 0, queued: 0 });
    expect(ep.requests()).toBe(3);
    const sent = ep.bodies.flatMap((b) => b.resourceSpans);
    const orgOf = (rs: (typeof sent)[number]) =>
      rs.resource?.attributes.find((a) => a.key === "kiln.organization.id")?.value?.value.value;
    expect(sent.map(orgOf).sort()).toEqual(["org_a", "org_b", "org_b"]);
    const third = sent.flatMap((rs) => rs.scopeSpans[0]?.spans ?? []).find((s) => s.name === "span 3");
    expect(third).toMatchObject({ kind: 3, status: { code: 2, message: "boom" }, startTimeUnixNano: 1_000_000_000n });
    expect(Buffer.from(third?.parentSpanId ?? []).toString("hex")).toBe("0000000000000001");
    expect(Object.fromEntries((third?.attributes ?? []).map((a) => [a.key, a.value?.value]))).toEqual({
      "gen_ai.usage.input_tokens": { case: "intValue", value: 12n },
      "x.ratio": { case: "doubleValue", value: 0.5 },
      "x.flag": { case: "boolValue", value: true },
      "x.list": { case: "arrayValue", value: expect.objectContaining({ values: [expect.anything()] }) },
    });
  });

  it("gives a batch up after the attempts, and at once on an answer not worth retrying", async () => {
    const down = await endpoint([503, 503, 503]);
    const exporter = createOtlpExporter({ ...options(down.url), maxAttempts: 3 });
    exporter.enqueue([span(1)]);
    await exporter.flush();
    expect(exporter.counts()).toMatchObject({ sent: 0, failed: 1 });
    expect(down.requests()).toBe(3);
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    const refused = await endpoint([400]);
    const again = createOtlpExporter(options(refused.url));
    again.enqueue([span(1)]);
    await again.flush();
    expect(again.counts()).toMatchObject({ sent: 0, failed: 1 });
    expect(refused.requests()).toBe(1);
  });

  it("closing, tries what is queued once more without waiting on backoffs", async () => {
    const down = await endpoint([503, 503, 503, 503]);
    const exporter = createOtlpExporter({ ...options(down.url), backoffMs: 60_000 });
    exporter.enqueue([span(1)]);
    await exporter.drain();
    expect(exporter.counts()).toMatchObject({ sent: 0, failed: 1 });
    expect(down.requests()).toBe(1);
  });

  it("drops and counts spans beyond its queue instead of growing", async () => {
    const ep = await endpoint([]);
    const exporter = createOtlpExporter({ ...options(ep.url), maxQueue: 2, maxBatch: 1 });
    exporter.enqueue([span(1), span(2), span(3), span(4)]);
    expect(exporter.counts()).toMatchObject({ dropped: 2 });
    await exporter.flush();
    expect(exporter.counts()).toEqual({ sent: 2, dropped: 2, failed: 0, queued: 0 });
  });
});

describe("the export's configuration (OTEL_EXPORTER_OTLP_*)", () => {
  it("is off without an endpoint, appends /v1/traces to the base endpoint, and reads headers and timeout", () => {
    expect(loadTraceExportConfig({})).toBeUndefined();
    expect(
      loadTraceExportConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example:4318/",
        OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer%20sk_x, x-tenant=a",
        OTEL_EXPORTER_OTLP_TIMEOUT: "2500",
      }),
    ).toEqual({
      url: "https://collector.example:4318/v1/traces",
      headers: { authorization: "Bearer sk_x", "x-tenant": "a" },
      timeoutMs: 2500,
    });
    expect(
      loadTraceExportConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: "https://ignored.example",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://kiln.example/otel/v1/traces",
      })?.url,
    ).toBe("http://kiln.example/otel/v1/traces");
  });

  it("refuses a bad endpoint, header list or timeout, naming the variable and never a value", () => {
    expect(() =>
      loadTraceExportConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: "ftp://collector",
        OTEL_EXPORTER_OTLP_HEADERS: "secret-value-only",
        OTEL_EXPORTER_OTLP_TIMEOUT: "soon",
      }),
    ).toThrow(
      "invalid configuration: OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL; OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs separated by commas; OTEL_EXPORTER_OTLP_TIMEOUT must be a number of milliseconds between 1 and 600000",
    );
  });
});
