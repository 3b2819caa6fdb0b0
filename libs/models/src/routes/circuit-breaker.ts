/**
 * Per-process circuit breakers of route targets (docs/providers.md "Routes"): a target whose calls
 * keep failing with transient failures is skipped for a while, then probed back by one call.
 * closed → (threshold consecutive failures) → open for openMs (calls skipped) → half-open (one probe
 * at a time; the others skipped) → closed on the probe's success, open again on its failure.
 */

export interface BreakerOptions {
  /** Consecutive transient failures that open the breaker; default 5. */
  failureThreshold?: number;
  /** How long an open breaker skips its target before a probe; default 30 000 ms. */
  openMs?: number;
  /** The clock (tests); default Date.now. */
  now?: () => number;
}

export type BreakerState = "closed" | "open" | "half_open";

/** What one breaker lets through: `call` (closed), `probe` (the half-open test call), or `skip`. */
export type BreakerAdmission = "call" | "probe" | "skip";

interface Breaker {
  failures: number;
  openUntil: number;
  probing: boolean;
}

export interface BreakerBoard {
  /** Whether a call of `key` may go now; a "probe" must be answered by success or failure. */
  admit(key: string): BreakerAdmission;
  succeeded(key: string): void;
  failed(key: string): void;
  /** A probe that ended without telling (the caller gave up): lets the next call probe. */
  released(key: string): void;
  state(key: string): BreakerState;
}

export const DEFAULT_BREAKER = { failureThreshold: 5, openMs: 30_000 } as const;

/** A board of breakers, one per key (created closed on first use; forgotten once closed and clean). */
export function createBreakerBoard(options: BreakerOptions = {}): BreakerBoard {
  const threshold = Math.max(1, options.failureThreshold ?? DEFAULT_BREAKER.failureThreshold);
  const openMs = Math.max(0, options.openMs ?? DEFAULT_BREAKER.openMs);
  const now = options.now ?? Date.now;
  const breakers = new Map<string, Breaker>();
  const get = (key: string): Breaker => {
    let b = breakers.get(key);
    if (!b) {
      b = { failures: 0, openUntil: 0, probing: false };
      breakers.set(key, b);
    }
    return b;
  };
  const stateOf = (b: Breaker | undefined): BreakerState => {
    if (!b || b.failures < threshold) return "closed";
    return now() < b.openUntil ? "open" : "half_open";
  };
  return {
    admit(key) {
      const b = breakers.get(key);
      const state = stateOf(b);
      if (state === "closed") return "call";
      if (state === "open" || b?.probing) return "skip";
      get(key).probing = true;
      return "probe";
    },
    succeeded(key) {
      breakers.delete(key);
    },
    failed(key) {
      const b = get(key);
      b.probing = false;
      b.failures++;
      if (b.failures >= threshold) b.openUntil = now() + openMs;
    },
    released(key) {
      const b = breakers.get(key);
      if (b) b.probing = false;
    },
    state: (key) => stateOf(breakers.get(key)),
  };
}
