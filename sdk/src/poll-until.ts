export interface WaitOptions {
  /** Between two reads; default 250. */
  intervalMs?: number;
  /** Overall; default 120 000. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Reads until `done` holds; throws when `timeoutMs` passes first. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  wait: WaitOptions = {},
): Promise<T> {
  const intervalMs = wait.intervalMs ?? 250;
  const deadline = Date.now() + (wait.timeoutMs ?? 120_000);
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() + intervalMs > deadline) {
      throw new Error(`still not done after ${wait.timeoutMs ?? 120_000} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    wait.signal?.throwIfAborted();
  }
}
