/**
 * Keeps this process's reads of the usage ledger apart from its flushes (usage-ledger.ts): a read
 * sees every flush applied here before it began, with the runs they counted already told, and none
 * half applied. The views that add their own uncounted runs to what they read (run-allowance.ts,
 * budget-gate.ts) then know which of their runs a read includes, and count none twice. Reads run
 * side by side; a flush waits for the reads in flight and holds new ones until it is applied.
 */
export interface LedgerLock {
  /** Runs `read`, which begins while no flush of this process is being applied. */
  read<T>(read: () => Promise<T>): Promise<T>;
  /** Applies a flush (and tells its counted runs) while no read is in flight. */
  apply<T>(apply: () => Promise<T>): Promise<T>;
}

export function createLedgerLock(): LedgerLock {
  let applying: Promise<void> | undefined;
  const reading = new Set<Promise<unknown>>();
  return {
    async read(read) {
      while (applying) await applying;
      // Nothing awaits between the check and the start: no flush begins in between.
      const started = read();
      reading.add(started);
      try {
        return await started;
      } finally {
        reading.delete(started);
      }
    },
    async apply(apply) {
      while (applying) await applying;
      let release: () => void = () => undefined;
      applying = new Promise<void>((resolve) => {
        release = resolve;
      });
      try {
        await Promise.allSettled([...reading]);
        return await apply();
      } finally {
        applying = undefined;
        release();
      }
    },
  };
}

/** No exclusion: for a view used alone (tests), where reads and flushes may interleave. */
export const noLedgerLock: LedgerLock = { read: (read) => read(), apply: (apply) => apply() };
