/**
 * The operator's OTLP logs endpoint as an audit destination (docs/governance.md "Streaming"):
 * every organization's entries, each one LogRecord of an OTLP/HTTP JSON export request
 * (https://opentelemetry.io/docs/specs/otlp/#otlphttp), `service.name` kiln-identity, scope
 * `kiln.audit`. The headers (often a key) are sent and never logged.
 */
import type { AuditDestination, SendOutcome } from "./audit-exporter.js";
import type { AuditEntryDoc } from "./audit-store.js";

export interface AuditOtlpConfig {
  /** The logs endpoint itself (`…/v1/logs`). */
  url: string;
  headers: Record<string, string>;
  /** One request's deadline. */
  timeoutMs: number;
}

type AnyValue = { stringValue: string } | { intValue: string } | { arrayValue: { values: AnyValue[] } };
const str = (v: string): AnyValue => ({ stringValue: v });
const attribute = (key: string, value: AnyValue) => ({ key, value });

/** Severity numbers of the OTLP log data model: INFO is 9, WARN 13. */
const SEVERITY = { INFO: 9, WARN: 13 } as const;

/** One entry as an OTLP LogRecord (JSON encoding: 64-bit integers as decimal strings). */
export function logRecordOf(e: AuditEntryDoc) {
  const severityText = e.outcome === "failure" ? "WARN" : "INFO";
  const nanos = `${BigInt(e.occurredAt.getTime()) * 1_000_000n}`;
  return {
    timeUnixNano: nanos,
    observedTimeUnixNano: `${BigInt(e.recordedAt.getTime()) * 1_000_000n}`,
    severityNumber: SEVERITY[severityText],
    severityText,
    body: str(e.action),
    attributes: [
      attribute("kiln.organization.id", str(e.organizationId)),
      attribute("kiln.audit.id", str(e.entryId)),
      attribute("kiln.audit.sequence", { intValue: String(e.sequence) }),
      attribute("kiln.audit.action", str(e.action)),
      attribute("kiln.audit.actor.type", str(e.actorType)),
      attribute("kiln.audit.actor.id", str(e.actorId)),
      attribute("kiln.audit.target.type", str(e.targetType)),
      attribute("kiln.audit.target.id", str(e.targetId)),
      attribute("kiln.audit.request_id", str(e.requestId)),
      attribute("kiln.audit.source_address", str(e.sourceAddress)),
      attribute("kiln.audit.changed_fields", { arrayValue: { values: e.changedFields.map(str) } }),
      attribute("kiln.audit.outcome", str(e.outcome)),
      attribute("kiln.audit.hash", str(e.hash)),
    ],
  };
}

/** The export request of one organization's page. */
export function logsRequestOf(entries: readonly AuditEntryDoc[]) {
  return {
    resourceLogs: [
      {
        resource: { attributes: [attribute("service.name", str("kiln-identity"))] },
        scopeLogs: [{ scope: { name: "kiln.audit" }, logRecords: entries.map(logRecordOf) }],
      },
    ],
  };
}

export function otlpDestination(
  config: AuditOtlpConfig,
  organizations: () => Promise<string[]>,
  send: typeof fetch = fetch,
): AuditDestination {
  return {
    name: "otlp",
    organizations,
    async send(_organizationId, entries): Promise<SendOutcome> {
      try {
        const r = await send(config.url, {
          method: "POST",
          headers: { ...config.headers, "content-type": "application/json" },
          body: JSON.stringify(logsRequestOf(entries)),
          signal: AbortSignal.timeout(config.timeoutMs),
        });
        await r.arrayBuffer().catch(() => undefined);
        return r.ok ? { ok: true } : { ok: false, status: r.status, error: `HTTP ${r.status}` };
      } catch (e) {
        const code = (e as { cause?: { code?: string } }).cause?.code;
        return { ok: false, status: 0, error: code ?? (e as Error).name };
      }
    },
  };
}
