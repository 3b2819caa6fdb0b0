import { type Client, createContextValues } from "@connectrpc/connect";
import type { Logger } from "@kiln/kit/logger";
import { kRequestId } from "@kiln/kit/principal";
import type { AuditEntryInput, AuditService } from "@kiln/proto/audit";

type EntryInit = Omit<AuditEntryInput, "$typeName" | "$unknown">;

/** Entries kept for a later try while identity cannot take them; past this the oldest are logged and dropped. */
const MAX_PENDING = 10_000;
const RETRY_MS = 1_000;

/**
 * Hands entries to identity: at once, awaited, and when identity cannot take one (it is restarting)
 * the entry waits in memory and is sent again every second. An entry carries its id, so one sent
 * twice (the first answer was lost) is stored once.
 */
export function createAuditSender(audit: Client<typeof AuditService>, logger: Logger) {
  const pending: { entry: EntryInit; requestId: string }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;

  const record = (entries: EntryInit[], requestId: string) =>
    audit.recordAuditEntries(
      { entries },
      { contextValues: createContextValues().set(kRequestId, requestId), timeoutMs: 5_000 },
    );

  async function flush(): Promise<void> {
    while (pending.length > 0) {
      const batch = pending.slice(0, 100);
      try {
        await record(
          batch.map((p) => p.entry),
          batch[0]?.requestId ?? "",
        );
      } catch (err) {
        logger.warn({ err, pending: pending.length }, "audit entries not recorded yet; retrying");
        return;
      }
      pending.splice(0, batch.length);
    }
    clearInterval(timer);
    timer = undefined;
  }

  function later(entry: EntryInit, requestId: string): void {
    pending.push({ entry, requestId });
    if (pending.length > MAX_PENDING) {
      const dropped = pending.shift();
      logger.error(
        { entryId: dropped?.entry.id, action: dropped?.entry.action },
        "audit entry dropped: too many pending",
      );
    }
    timer ??= setInterval(() => {
      flushing ??= flush().finally(() => {
        flushing = undefined;
      });
    }, RETRY_MS);
    timer.unref();
  }

  return {
    async send(entry: EntryInit, requestId: string): Promise<void> {
      try {
        await record([entry], requestId);
      } catch (err) {
        logger.warn({ err, requestId }, "audit entry not recorded; kept for a retry");
        later(entry, requestId);
      }
    },
    async stop(): Promise<void> {
      clearInterval(timer);
      timer = undefined;
      await flushing;
      if (pending.length > 0) await flush();
    },
  };
}
