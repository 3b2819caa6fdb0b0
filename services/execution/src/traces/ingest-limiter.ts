/**
 * Bounds OTLP ingestion beside the run path (docs/observability.md "Scale"): one ingestion at a
 * time per execution process, and after each one that took `d` ms a rest of `d × (1/share − 1)`
 * ms, so ingestion holds at most `share` of the process's time (default 10 %, TRACE_INGEST_SHARE)
 * whatever the exporters send. At most `maxWaiting` requests wait; one more is refused with
 * `resource_exhausted` (429), which OTLP exporters retry with backoff. Time the work reports as
 * spent waiting elsewhere (on a store that is another process) is not this process's: it is left
 * out of `d`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { DomainError } from "@kiln/kit/errors";

export const DEFAULT_INGEST_SHARE = 0.1;

export function createIngestLimiter(options: { share?: number; maxWaiting?: number } = {}) {
  const share = options.share ?? DEFAULT_INGEST_SHARE;
  const maxWaiting = options.maxWaiting ?? 64;
  let tail: Promise<unknown> = Promise.resolve();
  let pending = 0;
  let restUntil = 0;
  return function limit<T>(work: (waitedElsewhere: (ms: number) => void) => Promise<T>): Promise<T> {
    if (pending >= maxWaiting)
      return Promise.reject(new DomainError("resource_exhausted", "trace ingestion is busy: retry later"));
    pending++;
    const turn = tail.then(async () => {
      const wait = restUntil - Date.now();
      if (wait > 0) await sleep(wait);
      const started = performance.now();
      let elsewhere = 0;
      try {
        return await work((ms) => {
          elsewhere += ms;
        });
      } finally {
        const held = Math.max(0, performance.now() - started - elsewhere);
        restUntil = Date.now() + held * (1 / share - 1);
        pending--;
      }
    });
    tail = turn.catch(() => undefined);
    return turn;
  };
}
