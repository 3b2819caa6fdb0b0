/**
 * Streams the audit log to its destinations (docs/governance.md "Streaming"): the log is the
 * outbox. Every second, and right after entries are recorded, each destination's organizations
 * are walked: one whose log went past its cursor is claimed (a lease, export-cursors.ts), its
 * entries after the cursor are sent a page at a time in sequence order, and the cursor moves only
 * once the receiver acknowledged the page. A refused or failed page is logged and tried again after
 * a backoff, from the same place: at least once, in order per organization, nothing lost across a
 * restart. Nothing here is awaited by the record path.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "@kiln/kit/logger";
import type { Collection } from "@kiln/kit/store";
import type { AuditEntryDoc } from "./audit-store.js";
import { createExportCursors, type ExportCursorDoc } from "./export-cursors.js";

export type SendOutcome = { ok: true } | { ok: false; status: number; error: string };

export interface AuditDestination {
  /** The cursor's name: `otlp`, `webhook`. */
  name: string;
  /** The organizations whose entries go to this destination now. */
  organizations(): Promise<string[]>;
  /** Sends one page of an organization's entries, oldest first; ok once the receiver acknowledged it (2xx). */
  send(organizationId: string, entries: AuditEntryDoc[]): Promise<SendOutcome>;
}

export interface AuditExporterOptions {
  entries: Collection<AuditEntryDoc>;
  cursors: Collection<ExportCursorDoc>;
  destinations: AuditDestination[];
  logger: Logger;
  /** Between two passes; default one second. */
  intervalMs?: number;
  /** Entries per request; default 100. */
  pageSize?: number;
  /** How long a claim holds an organization's export; default 30 s (longer than a send's deadline). */
  leaseMs?: number;
  /** The first wait after a failure, doubled each time up to five minutes; default one second. */
  backoffMs?: number;
  now?: () => Date;
  /** This process, in the leases it takes; default a new id. */
  holder?: string;
}

/** Pages one claim sends before it lets the next organization go. */
const PAGES_PER_CLAIM = 20;

/** A view of an entry as `GET /api/audit-log` answers it. */
export const exportedEntry = (e: AuditEntryDoc) => ({
  id: e.entryId,
  organizationId: e.organizationId,
  sequence: e.sequence,
  occurredAt: e.occurredAt.toISOString(),
  actor: { type: e.actorType, id: e.actorId, organizationId: e.organizationId },
  action: e.action,
  target: { type: e.targetType, id: e.targetId },
  requestId: e.requestId,
  sourceAddress: e.sourceAddress,
  changedFields: e.changedFields,
  outcome: e.outcome,
  previousHash: e.previousHash,
  hash: e.hash,
});

export function createAuditExporter(options: AuditExporterOptions) {
  const now = options.now ?? (() => new Date());
  const pageSize = options.pageSize ?? 100;
  const backoffMs = options.backoffMs ?? 1_000;
  const cursors = createExportCursors(
    options.cursors,
    options.holder ?? `exporter_${randomUUID()}`,
    options.leaseMs ?? 30_000,
  );
  const { entries, logger } = options;

  /** Sends what one organization's log holds past the cursor, until it is all acknowledged or a send fails. */
  async function exportOrganization(destination: AuditDestination, claimed: ExportCursorDoc): Promise<void> {
    const organizationId = claimed.organizationId;
    for (let page = 0; page < PAGES_PER_CLAIM; page++) {
      const batch = await entries.find(
        { organizationId, sequence: { $gt: claimed.sequence } },
        { sort: { sequence: 1 }, limit: pageSize },
      );
      const first = batch[0];
      const last = batch[batch.length - 1];
      if (!first || !last) break;
      if (claimed.sequence > 0 && first.sequence !== claimed.sequence + 1)
        logger.warn(
          { destination: destination.name, organizationId, after: claimed.sequence, next: first.sequence },
          "audit entries were removed by retention before they were exported",
        );
      const outcome = await destination.send(organizationId, batch);
      if (!outcome.ok) {
        const retryInMs = await cursors.failed(claimed, now(), backoffMs, outcome.error);
        logger.warn(
          {
            destination: destination.name,
            organizationId,
            status: outcome.status,
            error: outcome.error,
            failures: claimed.failures + 1,
            retryInMs,
          },
          "audit entries were not exported; they are sent again after a wait",
        );
        return;
      }
      if (!(await cursors.advance(claimed, last.sequence, now()))) return;
      if (batch.length < pageSize) break;
    }
    await cursors.release(claimed);
  }

  async function exportDestination(destination: AuditDestination): Promise<void> {
    const organizations = await destination.organizations();
    if (organizations.length === 0) return;
    const known = await cursors.of(destination.name);
    for (const organizationId of organizations) {
      try {
        const at = now();
        const cursor = known.get(organizationId);
        if (cursor && (cursor.retryAt > at || (cursor.leaseUntil > at && cursor.leaseHolder !== ""))) continue;
        const newest = await entries.findOne(
          { organizationId },
          { sort: { sequence: -1 }, projection: { sequence: 1 } },
        );
        if (!newest || newest.sequence <= (cursor?.sequence ?? 0)) continue;
        const claimed = await cursors.claim(destination.name, organizationId, at);
        if (claimed) await exportOrganization(destination, claimed);
      } catch (err) {
        logger.warn({ err, destination: destination.name, organizationId }, "the audit export failed");
      }
    }
  }

  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  /** One pass over every destination (destinations side by side); a pass asked for while one runs follows it. */
  function runOnce(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await Promise.all(
          options.destinations.map((d) =>
            exportDestination(d).catch((err: unknown) =>
              logger.warn({ err, destination: d.name }, "the audit export failed"),
            ),
          ),
        );
      } while (again && !stopped);
    })().finally(() => {
      running = undefined;
    });
    return running;
  }

  const timer = setInterval(() => {
    if (!stopped) void runOnce();
  }, options.intervalMs ?? 1_000);
  timer.unref();

  return {
    runOnce,
    /** Entries were recorded: a pass now rather than at the next tick. */
    kick(): void {
      if (!stopped) void runOnce();
    },
    /** No further pass; resolves once the one in flight is done. */
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

export type AuditExporter = ReturnType<typeof createAuditExporter>;
