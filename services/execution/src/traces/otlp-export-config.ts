/**
 * Where Kiln's run spans are exported (docs/configuration.md, docs/observability.md "Export"), from
 * the OpenTelemetry SDK's own variables: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is) or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` appended), headers from
 * `OTEL_EXPORTER_OTLP_TRACES_HEADERS` or `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,key2=value2`,
 * values URL-encoded) and the deadline from `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` or
 * `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds, default 10000). Checked at start.
 */
import { otlpHeadersOf as headersOf, otlpUrlOf as httpUrl } from "@kiln/kit/otlp-config";
import type { OtlpExportConfig } from "./otlp-exporter.js";

/** The export's configuration, undefined when no endpoint is set; throws listing every problem. */
export function loadTraceExportConfig(
  env: Record<string, string | undefined> = process.env,
): OtlpExportConfig | undefined {
  const problems: string[] = [];
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  let url: URL | undefined;
  if (traces) url = httpUrl("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", traces, problems);
  else if (base) {
    const parsed = httpUrl("OTEL_EXPORTER_OTLP_ENDPOINT", base, problems);
    if (parsed) url = new URL(`${parsed.href.replace(/\/+$/, "")}/v1/traces`);
  }
  const headerVar = env.OTEL_EXPORTER_OTLP_TRACES_HEADERS
    ? "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
    : "OTEL_EXPORTER_OTLP_HEADERS";
  const headers = headersOf(headerVar, env[headerVar] ?? "", problems);
  const timeoutVar = env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT
    ? "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"
    : "OTEL_EXPORTER_OTLP_TIMEOUT";
  const timeoutText = env[timeoutVar]?.trim() || "10000";
  const timeoutMs = Number(timeoutText);
  if (!/^\d+$/.test(timeoutText) || timeoutMs < 1 || timeoutMs > 600_000)
    problems.push(`${timeoutVar} must be a number of milliseconds between 1 and 600000`);
  if (problems.length > 0) throw new Error(`invalid configuration: ${problems.join("; ")}`);
  return url ? { url: url.href, headers, timeoutMs } : undefined;
}
