/**
 * The plan's monthly run limit (entitlements.monthlyRunLimit, docs/usage.md "The monthly run
 * limit"), checked where every stored run starts, before any provider call, with no read on the
 * way: each process keeps, per organization, the month's runs the ledger had counted when it last
 * read (every `refreshMs`, in the background) plus the runs it admitted itself that the ledger has
 * not counted yet, or counted after that read began (ledger-lock.ts: a read sees the flushes applied
 * here before it, so none is counted twice). Within one process the check is exact (admission is
 * synchronous); across replicas each sees the others' runs once the ledger counted them and it
 * read again.
 */
import { resourceExhausted } from "@kiln/kit/errors";
import { type LedgerLock, noLedgerLock } from "./ledger-lock.js";
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
  /** The ledger's lock, shared with its flushes (usage-ledger.ts). */
  lock?: LedgerLock;
  now?: () => Date;
}

/** A run admitted here: when it was stored (undefined while running) and told counted (a tick of the clock). */
interface Pending {
  storedAtMs?: number;
  countedAt?: number;
}

interface Count {
  month: string;
  /** The ledger's count for the month, as last read. */
  ledgerRuns: number;
  readAtMs: number;
  /** Read once at least: until then every admission waits for the first read. */
  seeded: boolean;
  reading: Promise<void> | undefined;
  /** Runs admitted here that the last read did not include. */
  pending: Map<string, Pending>;
}

const MAX_ORGANIZATIONS = 10_000;

export function createRunAllowance(deps: RunAllowanceDeps) {
  const refreshMs = deps.refreshMs ?? 1_000;
  const settleMs = deps.settleMs ?? 5_000;
  const now = deps.now ?? (() => new Date());
  const lock = deps.lock ?? noLedgerLock;
  const counts = new Map<string, Count>();
  // Orders a read's start after the counts told before it.
  let clock = 0;

  function read(organizationId: string, count: Count): Promise<void> {
    const startedAtMs = now().getTime();
    let startedAt = 0;
    count.reading ??= lock
      .read(() => {
        startedAt = ++clock;
        return deps.monthRunsOf(organizationId, count.month);
      })
      .then((runs) => {
        count.ledgerRuns = runs;
        count.readAtMs = startedAtMs;
        count.seeded = true;
        for (const [runId, run] of count.pending) {
          // Counted before the read began (the read has it), or long enough ago that another replica's ledger has.
          const included = run.countedAt !== undefined && run.countedAt < startedAt;
          if (included || (run.storedAtMs !== undefined && run.storedAtMs < startedAtMs - settleMs))
            count.pending.delete(runId);
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
      count.pending.set(runId, {});
    },
    /** The run admitted ended: stored (the ledger will count it) or not (it never counts). */
    finished(organizationId: string, runId: string, stored: boolean): void {
      const count = counts.get(organizationId);
      if (!count?.pending.has(runId)) return;
      const run = count.pending.get(runId);
      if (stored && run) run.storedAtMs = now().getTime();
      else count.pending.delete(runId);
    },
    /** This process's ledger counted these runs (usage-ledger.ts onCounted): the next read has them. */
    counted(organizationId: string, runIds: string[]): void {
      const count = counts.get(organizationId);
      if (!count) return;
      for (const id of runIds) {
        const run = count.pending.get(id);
        if (run && run.countedAt === undefined) run.countedAt = ++clock;
      }
    },
  };
}

export type RunAllowance = ReturnType<typeof createRunAllowance>;
