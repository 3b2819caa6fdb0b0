/**
 * Bounds OTLP ingestion beside the run path (docs/observability.md "Scale"): one ingestion at a
 * time per execution process (decoding, mapping and writes), and after each one that took `d` ms
 * a rest of `d × (1/share − 1)` ms. The share depends on the run path: while runs are being
 * stored (any since the previous ingestion ended), ingestion holds at most `share` of the
 * process's time (default 5 %, TRACE_INGEST_SHARE) whatever the exporters send; while none are,
 * it may take `idleShare` (default 50 %, TRACE_INGEST_IDLE_SHARE), so a quiet process ingests a
 * backlog fast and a busy one barely notices it. A request is refused with `resource_exhausted`
 * (429, which OTLP exporters retry with backoff) when `maxWaiting` wait already (their bodies are
 * held in memory), or when the turns ahead of it would keep it waiting over `maxWaitMs` (default
 * 8 s: an exporter gives up on a request after 10 s, then sends it again).
 *
 * While idle, time the work reports as spent waiting elsewhere (on a store that is another
 * process: FerretDB, MongoDB) is left out of `d`: it is the store's time, which nothing else
 * needs then. While runs are stored it counts, since the run path waits on the same store.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { DomainError } from "@kiln/kit/errors";

export const DEFAULT_INGEST_SHARE = 0.05;
export const DEFAULT_INGEST_IDLE_SHARE = 0.5;

export interface IngestLimiterOptions {
  /** The share while the run path is busy. */
  share?: number;
  /** The share while no run was stored since the previous ingestion ended. */
  idleShare?: number;
  maxWaiting?: number;
  maxWaitMs?: number;
  /** How many runs this process has stored so far (a counter that only grows): the run path's activity. */
  runsStored?: () => number;
}

export function createIngestLimiter(options: IngestLimiterOptions = {}) {
  const share = options.share ?? DEFAULT_INGEST_SHARE;
  const idleShare = Math.max(options.idleShare ?? DEFAULT_INGEST_IDLE_SHARE, share);
  const maxWaiting = options.maxWaiting ?? 64;
  const maxWaitMs = options.maxWaitMs ?? 8_000;
  // Without the run path's activity to go by, always the busy share.
  let calls = 0;
  const runsStored = options.runsStored ?? (() => ++calls);
  let tail: Promise<unknown> = Promise.resolve();
  let pending = 0;
  let restUntil = 0;
  // The last ingestion's time with its rest: what each turn ahead of a new request will take.
  let cycleMs = 0;
  // Any value the counter cannot have: the first ingestion counts as busy.
  let runsAtLastEnd = -1;
  return function limit<T>(work: (waitedElsewhere: (ms: number) => void) => Promise<T>): Promise<T> {
    const expectedWait = Math.max(0, restUntil - Date.now()) + pending * cycleMs;
    if (pending >= maxWaiting || (pending > 0 && expectedWait > maxWaitMs))
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
        const runs = runsStored();
        const busy = runs !== runsAtLastEnd;
        runsAtLastEnd = runs;
        const took = performance.now() - started;
        const held = busy ? took : Math.max(0, took - elsewhere);
        const rest = held * (1 / (busy ? share : idleShare) - 1);
        restUntil = Date.now() + rest;
        cycleMs = took + rest;
        pending--;
      }
    });
    tail = turn.catch(() => undefined);
    return turn;
  };
}
