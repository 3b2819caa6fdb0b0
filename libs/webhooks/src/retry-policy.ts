/** When a failed delivery is attempted again, and when attempts stop (docs/webhooks.md "Delivery"). */
export interface RetryPolicy {
  /** First retry after about this long; doubles per attempt (default 5 s). */
  baseDelayMs: number;
  /** The longest wait between two attempts (default 1 h). */
  maxDelayMs: number;
  /** Attempts stop this long after the first (default 24 h). */
  windowMs: number;
  /** An endpoint failing every delivery this long is disabled (default 3 days). */
  disableAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  baseDelayMs: 5_000,
  maxDelayMs: 3_600_000,
  windowMs: 24 * 3_600_000,
  disableAfterMs: 3 * 24 * 3_600_000,
};

/** The wait before attempt `n + 1` after `n` failed ones: exponential, with jitter (half to whole). */
export function backoffMs(failedAttempts: number, policy: RetryPolicy, random = Math.random): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, failedAttempts - 1));
  return Math.round(exponential * (0.5 + random() / 2));
}
