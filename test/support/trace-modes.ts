/** Shared by the trace tests: the two run modes, an in-memory OTel tracer, and sending spans with the SDK's exporters. */

import { loadTraceExportConfig } from "@kiln/execution/config";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { inject } from "vitest";
import { startDistributed } from "./distributed.js";
import { startEmbedded } from "./embedded.js";

export interface TraceModeOptions {
  runTraces?: boolean;
  env?: Record<string, string>;
}

export const TRACE_MODES = [
  {
    name: "embedded",
    /**
     * `runTraces`: Kiln's own runs recorded as traces (RUN_TRACES; on by default, false turns it off); `env`: the
     * OTEL_EXPORTER_OTLP_* variables of the span export, read by the launcher's loader.
     */
    async start(options: TraceModeOptions = {}) {
      const { kiln, baseUrl } = await startEmbedded({
        runTraces: options.runTraces,
        traceExport: loadTraceExportConfig(options.env ?? {}),
      });
      return { baseUrl, stop: () => kiln.close() };
    },
  },
  {
    name: "distributed",
    async start(options: TraceModeOptions = {}) {
      const kiln = await startDistributed({
        mongoUrl: inject("mongoUrl"),
        natsUrl: inject("natsUrl"),
        env: { ...(options.runTraces === false ? { RUN_TRACES: "off" } : {}), ...options.env },
      });
      return { baseUrl: kiln.gatewayUrl, stop: () => kiln.stop() };
    },
  },
];

/** A tracer whose finished spans stay in memory until sent. */
export function memoryTracer(serviceName: string) {
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    spanProcessors: [new SimpleSpanProcessor({ exporter: memory })],
  });
  return { provider, memory };
}

export const EXPORTERS = [
  [
    "protobuf, gzip",
    (base: string, key: string) =>
      new ProtoExporter({
        url: `${base}/otel/v1/traces`,
        headers: { authorization: `Bearer ${key}` },
        compression: "gzip" as never,
      }),
  ],
  [
    "JSON",
    (base: string, key: string) => new JsonExporter({ url: `${base}/otel/v1/traces`, headers: { "x-api-key": key } }),
  ],
] as const;

export async function sendSpans(exporter: ProtoExporter | JsonExporter, spans: ReadableSpan[]) {
  const result = await new Promise<{ code: number; error?: Error & { code?: number } }>((resolve) =>
    exporter.export(spans, resolve),
  );
  await exporter.shutdown();
  return result;
}
