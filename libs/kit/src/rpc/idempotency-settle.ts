/**
 * What a process knows of the keys it claimed: which of its claimed calls are running, and the
 * writes that end a claim (its answer, or its release after a failed call) that the store refused
 * (it was down) and that are tried again every `retryMs` until they land. While a claim's end is
 * pending, a retry of its key answers 409 (still in flight); once the store is back the write
 * lands and the retry is replayed or runs. Without this, a claim whose release failed stayed in
 * flight for as long as its process lived (docs/operations.md "Process deaths").
 */
export interface ClaimSettler {
  /** The claim is this process's and its call runs. */
  start(id: string): void;
  /** The call ended: `write` records its end; tried now, and again later while the store refuses it. */
  end(id: string, write: () => Promise<unknown>): Promise<void>;
  /** Whether a claim of this process still runs or still waits for its end to be written. */
  holds(id: string): boolean;
}

export function createClaimSettler(options: { retryMs?: number; onRetryFailed?: (e: unknown) => void } = {}) {
  const retryMs = options.retryMs ?? 500;
  const running = new Set<string>();
  const pending = new Map<string, () => Promise<unknown>>();
  let timer: NodeJS.Timeout | undefined;
  let draining = false;

  const drain = async () => {
    if (draining) return;
    draining = true;
    try {
      for (const [id, write] of pending) {
        try {
          await write();
          pending.delete(id);
        } catch (e) {
          options.onRetryFailed?.(e);
          return;
        }
      }
    } finally {
      draining = false;
      if (pending.size === 0 && timer) {
        clearInterval(timer);
        timer = undefined;
      }
    }
  };

  const settler: ClaimSettler = {
    start(id) {
      running.add(id);
    },
    async end(id, write) {
      try {
        await write();
      } catch (e) {
        pending.set(id, write);
        timer ??= setInterval(() => void drain(), retryMs).unref();
        throw e;
      } finally {
        running.delete(id);
      }
    },
    holds: (id) => running.has(id) || pending.has(id),
  };
  return settler;
}
