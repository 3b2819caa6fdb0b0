/**
 * Cancellation for one outgoing call: a deadline of its own linked to the caller's signal, and a
 * race against a signal, both of which let go of every listener they added once the call ends.
 *
 * Why not `AbortSignal.any` or a listener left in place: the caller's signal (an RPC handler's
 * context signal) is aborted when its call ends, successful or not, and every listener still on it
 * then runs: a finished fetch would be aborted through the SDK and undici that made it, which cost
 * about 6% of an embedded run's CPU under load before this module existed.
 */

export interface CallDeadline {
  /** Aborts when the caller's signal does (with its reason) or at the deadline (with `onTimeout()`). */
  readonly signal: AbortSignal;
  /** Whether the deadline, not the caller, aborted the signal. */
  timedOut(): boolean;
  /** Clears the timer and the listener on the caller's signal; call it when the call ends. */
  dispose(): void;
}

export function callDeadline(
  caller: AbortSignal | undefined,
  timeoutMs: number,
  onTimeout: () => unknown,
): CallDeadline {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(onTimeout());
  }, timeoutMs);
  const onCallerAbort = () => controller.abort(caller?.reason);
  if (caller?.aborted) onCallerAbort();
  else caller?.addEventListener("abort", onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose() {
      clearTimeout(timer);
      caller?.removeEventListener("abort", onCallerAbort);
    },
  };
}

/**
 * Settles as `promise` does, or rejects with the signal's reason as soon as it aborts (even while
 * `promise` waits on something that ignores the signal). A rejection of `promise` after the abort is
 * expected, not unhandled.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  promise.catch(() => {});
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
