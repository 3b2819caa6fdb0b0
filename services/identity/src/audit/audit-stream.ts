/**
 * The audit stream's destinations, put together for the identity service (docs/governance.md
 * "Streaming"): the operator's OTLP logs endpoint (every organization) when one is configured, and
 * each organization's own webhook when it set one.
 */
import type { Logger } from "@kiln/kit/logger";
import type { Store } from "@kiln/kit/store";
import type { IdentityCollections } from "../store/identity-store.js";
import { type AuditDestination, type AuditExporter, createAuditExporter } from "./audit-exporter.js";
import { auditEntries } from "./audit-store.js";
import { auditStreams } from "./audit-stream-store.js";
import { ensureExportCursorIndexes, exportCursors } from "./export-cursors.js";
import { type AuditOtlpConfig, otlpDestination } from "./otlp-destination.js";
import { type AuditWebhookOptions, webhookDestination } from "./webhook-destination.js";

export interface AuditStreamOptions {
  /** AUDIT_OTLP_LOGS_ENDPOINT and AUDIT_OTLP_HEADERS (export-config.ts); none: no OTLP export. */
  otlp?: AuditOtlpConfig;
  /** The organizations' own webhooks (`audit_streams`); none: not streamed to any, and none can be set. */
  webhook?: AuditWebhookOptions;
  /** Between two passes; default one second. */
  intervalMs?: number;
  /** The first wait after a failed send; default one second. */
  backoffMs?: number;
}

export async function startAuditStream(
  store: Store,
  c: IdentityCollections,
  logger: Logger,
  options: AuditStreamOptions = {},
): Promise<AuditExporter | undefined> {
  const allOrganizations = async () =>
    (await c.organizations.find({}, { projection: { _id: 1 }, limit: 1_000_000 })).map((o) => o._id);
  const destinations: AuditDestination[] = [];
  if (options.otlp) destinations.push(otlpDestination(options.otlp, allOrganizations));
  if (options.webhook) destinations.push(webhookDestination(auditStreams(store), options.webhook));
  if (destinations.length === 0) return undefined;
  await ensureExportCursorIndexes(store);
  return createAuditExporter({
    entries: auditEntries(store),
    cursors: exportCursors(store),
    destinations,
    logger,
    intervalMs: options.intervalMs,
    backoffMs: options.backoffMs,
  });
}
