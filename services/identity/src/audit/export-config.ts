/**
 * Where the audit log is streamed for the whole installation (docs/configuration.md, docs/governance.md
 * "Streaming"): `AUDIT_OTLP_LOGS_ENDPOINT`, an OTLP/HTTP logs endpoint used as it is
 * (`http://collector:4318/v1/logs`), and `AUDIT_OTLP_HEADERS` (`key=value,key2=value2`, values
 * URL-encoded, never logged). Checked at start; nothing is streamed without an endpoint.
 */
import { otlpHeadersOf, otlpUrlOf } from "@kiln/kit/otlp-config";
import type { AuditOtlpConfig } from "./otlp-destination.js";

/** One request's deadline. */
const TIMEOUT_MS = 10_000;

/** The OTLP destination's configuration, undefined without an endpoint; throws listing every problem. */
export function loadAuditOtlpConfig(
  env: Record<string, string | undefined> = process.env,
): AuditOtlpConfig | undefined {
  const problems: string[] = [];
  const endpoint = env.AUDIT_OTLP_LOGS_ENDPOINT?.trim();
  const url = endpoint ? otlpUrlOf("AUDIT_OTLP_LOGS_ENDPOINT", endpoint, problems) : undefined;
  const headers = otlpHeadersOf("AUDIT_OTLP_HEADERS", env.AUDIT_OTLP_HEADERS ?? "", problems);
  if (problems.length > 0) throw new Error(`invalid configuration: ${problems.join("; ")}`);
  return url ? { url: url.href, headers, timeoutMs: TIMEOUT_MS } : undefined;
}
