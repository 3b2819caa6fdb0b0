/**
 * Bounds OTLP ingestion beside the run path, fairly between organizations (docs/observability.md
 * "Scale"). An ingestion is done in pieces (traces.ts); one piece at a time holds the process, and
 * between two pieces the request gives the process up (`turn.next()`), so the organizations with
 * work waiting take their pieces round-robin: one organization's large export delays another's by
 * at most one piece and one rest per organization ahead of it.
 *
 * After a piece that held the process `d` ms, the organization rests `d × (1/share − 1) × k` ms
 * (`k` the organizations with work at that moment), so together they hold at most `share` of the
 * process's time; the process as a whole rests the same but at most `maxRestMs` (default 1 s), during
 * which no piece starts: a small export of another organization waits that, not the large one's rest.
 * The share depends on the run path: while runs are being stored (any since the previous piece
 * ended) `share` (default 5 %, TRACE_INGEST_SHARE); while none are `idleShare` (default 50 %,
 * TRACE_INGEST_IDLE_SHARE). While idle, time the work reports as spent waiting on a store that is
 * another process is left out of `d` (the store's time, which nothing else needs then).
 *
 * A request is refused with `resource_exhausted` (429, which OTLP exporters retry with backoff)
 * when `maxWaiting` requests are in already (their bodies are held in memory), or its organization
 * has `maxWaitingPerOrganization`, or its expected wait is over `maxWaitMs` (default 8 s: an
 * exporter gives up after 10 s) — and when its first piece has not started `maxWaitMs` after it
 * came, whatever was expected: no request waits longer to start.
 */
import { DomainError } from "@kiln/kit/errors";

export const DEFAULT_INGEST_SHARE = 0.05;
export const DEFAULT_INGEST_IDLE_SHARE = 0.5;

export interface IngestLimiterOptions {
  /** The share while the run path is busy. */
  share?: number;
  /** The share while no run was stored since the previous piece ended. */
  idleShare?: number;
  maxWaiting?: number;
  maxWaitingPerOrganization?: number;
  maxWaitMs?: number;
  /** The longest the whole process rests after a piece (an organization's own rest is not bounded by it). */
  maxRestMs?: number;
  /** How many runs this process has stored so far (a counter that only grows): the run path's activity. */
  runsStored?: () => number;
}

/** What an ingestion is given while it holds the process. */
export interface IngestTurn {
  /** Time spent waiting on a store elsewhere (left out of the rest while idle). */
  waitedElsewhere(ms: number): void;
  /** Between two pieces: lets the other organizations waiting take theirs, then comes back after the rest. */
  next(): Promise<void>;
}

interface Waiter {
  start: () => void;
  fail: (error: Error) => void;
  arrived: number;
  /** A request's first piece (refused past the wait bound); a later piece is never refused. */
  fresh: boolean;
}

interface Org {
  queue: Waiter[];
  restUntil: number;
  /** Requests in (waiting or ingesting). */
  requests: number;
  /** The last request's time from its first piece to its end, with its last rest. */
  cycleMs: number;
}

const busyError = (why: string) =>
  new DomainError("resource_exhausted", `trace ingestion is busy: ${why}; retry later`);

export function createIngestLimiter(options: IngestLimiterOptions = {}) {
  const share = options.share ?? DEFAULT_INGEST_SHARE;
  const idleShare = Math.max(options.idleShare ?? DEFAULT_INGEST_IDLE_SHARE, share);
  const maxWaiting = options.maxWaiting ?? 64;
  const maxPerOrg = options.maxWaitingPerOrganization ?? Math.max(1, Math.ceil(maxWaiting / 4));
  const maxWaitMs = options.maxWaitMs ?? 8_000;
  const maxRestMs = options.maxRestMs ?? 1_000;
  // Without the run path's activity to go by, always the busy share.
  let calls = 0;
  const runsStored = options.runsStored ?? (() => ++calls);
  const orgs = new Map<string, Org>();
  // The organizations with a piece waiting, in turn order.
  let ring: Org[] = [];
  let holding = false;
  let restUntil = 0;
  let pending = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Any value the counter cannot have: the first piece counts as busy.
  let runsAtLastEnd = -1;

  const orgOf = (id: string): Org => {
    let org = orgs.get(id);
    if (!org) {
      if (orgs.size >= 1_000) forgetRested();
      org = { queue: [], restUntil: 0, requests: 0, cycleMs: 0 };
      orgs.set(id, org);
    }
    return org;
  };
  const forgetRested = () => {
    const now = Date.now();
    for (const [id, org] of orgs) if (org.requests === 0 && org.restUntil <= now) orgs.delete(id);
  };

  /** Refuses the first pieces waiting past the bound, then starts the next piece whose turn it is. */
  function schedule(): void {
    clearTimeout(timer);
    timer = undefined;
    const now = Date.now();
    for (const org of ring) {
      org.queue = org.queue.filter((w) => {
        if (!w.fresh || now - w.arrived <= maxWaitMs) return true;
        w.fail(busyError(`waited over ${maxWaitMs} ms`));
        return false;
      });
    }
    ring = ring.filter((org) => org.queue.length > 0);
    if (ring.length === 0) return;
    // While a piece holds the process, only the first pieces' wait bounds can come due.
    if (holding) {
      wakeAt(now, true);
      return;
    }
    const index = now < restUntil ? -1 : ring.findIndex((org) => org.restUntil <= now);
    if (index < 0) {
      wakeAt(now, false);
      return;
    }
    const [org] = ring.splice(index, 1) as [Org];
    const waiter = org.queue.shift() as Waiter;
    if (org.queue.length > 0) ring.push(org);
    holding = true;
    waiter.start();
  }

  /** Calls schedule again when a rest ends or a first piece's wait reaches the bound. */
  function wakeAt(now: number, boundsOnly: boolean): void {
    let at = Number.POSITIVE_INFINITY;
    for (const org of ring) {
      if (!boundsOnly) at = Math.min(at, Math.max(org.restUntil, restUntil));
      for (const w of org.queue) if (w.fresh) at = Math.min(at, w.arrived + maxWaitMs + 1);
    }
    if (at < Number.POSITIVE_INFINITY) timer = setTimeout(schedule, Math.max(0, at - now));
  }

  function acquire(org: Org, fresh: boolean): Promise<void> {
    return new Promise<void>((start, fail) => {
      const waiter = { start, fail, arrived: Date.now(), fresh };
      // A request's next piece keeps its place before its organization's later requests.
      if (fresh) org.queue.push(waiter);
      else org.queue.unshift(waiter);
      if (!ring.includes(org)) ring.push(org);
      schedule();
    });
  }

  function release(org: Org, started: number, elsewhere: number): void {
    const runs = runsStored();
    const busy = runs !== runsAtLastEnd;
    runsAtLastEnd = runs;
    const took = performance.now() - started;
    const held = busy ? took : Math.max(0, took - elsewhere);
    const rest = held * (1 / (busy ? share : idleShare) - 1);
    const now = Date.now();
    // Its turn taken: behind the others waiting.
    if (ring.includes(org)) ring = [...ring.filter((o) => o !== org), org];
    const withWork = ring.length + (ring.includes(org) ? 0 : 1);
    org.restUntil = now + rest * withWork;
    restUntil = now + Math.min(rest, maxRestMs);
    holding = false;
  }

  const expectedWait = (org: Org) =>
    Math.max(0, Math.max(org.restUntil, restUntil) - Date.now()) + (org.requests > 0 ? org.requests * org.cycleMs : 0);

  return async function limit<T>(organizationId: string, work: (turn: IngestTurn) => Promise<T>): Promise<T> {
    const org = orgOf(organizationId);
    if (pending >= maxWaiting) throw busyError(`${maxWaiting} requests are waiting`);
    if (org.requests >= maxPerOrg) throw busyError(`${maxPerOrg} requests of this organization are waiting`);
    if (expectedWait(org) > maxWaitMs) throw busyError(`the wait would be over ${maxWaitMs} ms`);
    pending++;
    org.requests++;
    try {
      await acquire(org, true);
      const first = Date.now();
      let started = performance.now();
      let elsewhere = 0;
      const turn: IngestTurn = {
        waitedElsewhere: (ms) => {
          elsewhere += ms;
        },
        next: async () => {
          release(org, started, elsewhere);
          // At least a turn of the event loop, for the run path, even with no rest at all.
          await new Promise((resolve) => setImmediate(resolve));
          await acquire(org, false);
          started = performance.now();
          elsewhere = 0;
        },
      };
      try {
        return await work(turn);
      } finally {
        release(org, started, elsewhere);
        org.cycleMs = Math.max(0, org.restUntil - first);
      }
    } finally {
      pending--;
      org.requests--;
      schedule();
    }
  };
}
