/**
 * A sliding one-minute window of tokens (docs/usage.md "Token-per-minute limits"): a ring of 60
 * per-second buckets, each holding the tokens counted in one second of the clock. The window at a
 * moment is the current second and the 59 before it, so the tokens of a second leave it 60 s after
 * that second began. Why a ring and not a library's fixed window: a window that opens at its first
 * count and resets whole lets twice the limit through across its edge, and tells only when all of
 * it resets; the ring never holds more than one minute and says when enough of it has left.
 */

const SECONDS = 60;

export interface TokenWindow {
  /** Counts `tokens` at the moment `atMs`. */
  add(atMs: number, tokens: number): void;
  /** The tokens counted in the minute up to `atMs`. */
  total(atMs: number): number;
  /**
   * Whole seconds from `atMs` until the window holds fewer than `limit` tokens (at least 1), once
   * the seconds counted now have left it; 0 when it already does.
   */
  secondsUntilUnder(atMs: number, limit: number): number;
  /** The last second anything was counted in (ms since the epoch, floored to the second). */
  lastCountedMs(): number;
}

export function createTokenWindow(): TokenWindow {
  const tokens = new Float64Array(SECONDS);
  // Which second of the clock each bucket holds; a bucket of an older second counts as empty.
  const seconds = new Float64Array(SECONDS).fill(Number.NEGATIVE_INFINITY);
  let last = Number.NEGATIVE_INFINITY;

  const secondOf = (atMs: number) => Math.floor(atMs / 1000);
  const live = (i: number, now: number) => (seconds[i] as number) > now - SECONDS;

  function total(atMs: number): number {
    const now = secondOf(atMs);
    let sum = 0;
    for (let i = 0; i < SECONDS; i++) if (live(i, now)) sum += tokens[i] as number;
    return sum;
  }

  return {
    add(atMs, n) {
      const s = secondOf(atMs);
      const i = ((s % SECONDS) + SECONDS) % SECONDS;
      if (seconds[i] !== s) {
        seconds[i] = s;
        tokens[i] = 0;
      }
      tokens[i] = (tokens[i] as number) + n;
      last = Math.max(last, s);
    },
    total,
    secondsUntilUnder(atMs, limit) {
      let left = total(atMs);
      if (left < limit) return 0;
      const now = secondOf(atMs);
      // Oldest second first: the window drops each one 60 s after it began.
      for (let s = now - SECONDS + 1; s <= now; s++) {
        const i = ((s % SECONDS) + SECONDS) % SECONDS;
        if (seconds[i] === s) left -= tokens[i] as number;
        if (left < limit) return Math.max(1, Math.ceil(((s + SECONDS) * 1000 - atMs) / 1000));
      }
      return SECONDS;
    },
    lastCountedMs: () => last * 1000,
  };
}
