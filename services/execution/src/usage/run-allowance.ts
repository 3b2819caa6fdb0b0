/**
 * The plan's monthly run limit (entitlements.monthlyRunLimit, docs/usage.md "The monthly run
 * limit"), checked where every stored run starts, before any provider call, with no read on the
 * way: each process keeps, per organization, the month's runs the ledger had counted when it last
 * read (every `refreshMs`, in the background) plus the runs it admitted itself that the ledger has
 * not counted yet. Within one process the check is exact (admission is synchronous); across
 * replicas each sees the others' runs once the ledger counted them and it read again.
 */
import { resourceExhausted } from "@kiln/kit/errors";
import { monthOf, secondsToNextMonth } from "./usage-rows.js";

export interface RunAllowanceDeps {
  /** The organization's monthly run limit, 0 for none (identity's answer, cached briefly). */
  monthlyRunLimitOf(organizationId: string): Promise<number>;
  /** The runs the ledger counted for the organization in `month` ("YYYY-MM"). */
  monthRunsOf(organizationId: string, month: string): Promise<number>;
  /** How often an organization's count is read again while it runs; default 1000 ms. */
  refreshMs?: number;
  /**
   * How long after a run this process admitted was stored the ledger is trusted to have counted it
   * (another replica's consumer may have): default 5000 ms.
   */
  settleMs?: number;
  now?: () => Date;
}

interface Count {
  month: string;
  /** The ledger's count for the month, as last read or told by this process's flushes. */
  ledgerRuns: number;
  readAtMs: number;
  /** Read once at least: until then every admission waits for the first read. */
  seeded: boolean;
  reading: Promise<void> | undefined;
  /** Runs admitted here and not counted yet: undefined while running, else when they were stored. */
  pending: Map<string, number | undefined>;
}

const MAX_ORGANIZATIONS = 10_000;

export function createRunAllowance(deps: RunAllowanceDeps) {
  const refreshMs = deps.refreshMs ?? 1_000;
  const settleMs = deps.settleMs ?? 5_000;
  const now = deps.now ?? (() => new Date());
  const counts = new Map<string, Count>();

  function read(organizationId: string, count: Count): Promise<void> {
    const startedAtMs = now().getTime();
    count.reading ??= deps
      .monthRunsOf(organizationId, count.month)
      .then((runs) => {
        // The ledger only grows: a read that raced a flush told here keeps the larger count.
        count.ledgerRuns = Math.max(count.ledgerRuns, runs);
        count.readAtMs = startedAtMs;
        count.seeded = true;
        for (const [runId, storedAtMs] of count.pending) {
          if (storedAtMs !== undefined && storedAtMs < startedAtMs - settleMs) count.pending.delete(runId);
        }
      })
      .finally(() => {
        count.reading = undefined;
      });
    return count.reading;
  }

  function countOf(organizationId: string, month: string): Count {
    const known = counts.get(organizationId);
    if (known?.month === month) return known;
    if (counts.size >= MAX_ORGANIZATIONS) counts.delete(counts.keys().next().value as string);
    const count: Count = { month, ledgerRuns: 0, readAtMs: 0, seeded: false, reading: undefined, pending: new Map() };
    counts.set(organizationId, count);
    return count;
  }

  return {
    /** Admits run `runId` or refuses it (429 resource_exhausted, Retry-After the month's turn). */
    async admit(organizationId: string, runId: string): Promise<void> {
      const limit = await deps.monthlyRunLimitOf(organizationId);
      if (limit <= 0) return;
      const at = now();
      const count = countOf(organizationId, monthOf(at));
      if (!count.seeded) await read(organizationId, count);
      else if (at.getTime() - count.readAtMs >= refreshMs) void read(organizationId, count).catch(() => undefined);
      if (count.ledgerRuns + count.pending.size >= limit) {
        throw resourceExhausted(
          `the organization's plan allows ${limit} runs a month and they are used; it resets at the start of the next month (UTC)`,
          secondsToNextMonth(at),
        );
      }
      count.pending.set(runId, undefined);
    },
    /** The run admitted ended: stored (the ledger will count it) or not (it never counts). */
    finished(organizationId: string, runId: string, stored: boolean): void {
      const count = counts.get(organizationId);
      if (!count?.pending.has(runId)) return;
      if (stored) count.pending.set(runId, now().getTime());
      else count.pending.delete(runId);
    },
    /** This process's ledger counted these runs (usage-ledger.ts onCounted). */
    counted(organizationId: string, runIds: string[]): void {
      const count = counts.get(organizationId);
      if (!count) return;
      count.ledgerRuns += runIds.length;
      for (const id of runIds) count.pending.delete(id);
    },
  };
}

export type RunAllowance = ReturnType<typeof createRunAllowance>;
