/**
 * At most N calls at once per model (MODEL_CONCURRENCY): a provider's rate limit is per model, and a
 * large evaluation would otherwise send every worker's items to it at once. Calls beyond the cap
 * wait in arrival order; a waiting call whose signal aborts leaves the queue with its reason.
 */
export interface CallLimiter {
  /** Runs `call` once the model has a free slot. */
  run<T>(modelId: string, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T>;
  /** Calls of the model running now and waiting. */
  stats(modelId: string): { running: number; waiting: number };
}

/**
 * `limits` by "<provider>/<model>" or "<provider>/*" (the exact id first); a model with neither
 * has no cap.
 */
export function createCallLimiter(limits: Record<string, number>): CallLimiter {
  const slots = new Map<string, { running: number; waiting: (() => void)[] }>();
  const limitOf = (modelId: string) => limits[modelId] ?? limits[`${modelId.split("/")[0]}/*`];
  // A wildcard cap is shared by the provider's models.
  const keyOf = (modelId: string) => (limits[modelId] !== undefined ? modelId : `${modelId.split("/")[0]}/*`);
  const slotOf = (key: string) => {
    let slot = slots.get(key);
    if (!slot) {
      slot = { running: 0, waiting: [] };
      slots.set(key, slot);
    }
    return slot;
  };

  return {
    async run(modelId, signal, call) {
      const limit = limitOf(modelId);
      if (limit === undefined) return call();
      const slot = slotOf(keyOf(modelId));
      if (slot.running >= limit) {
        signal?.throwIfAborted();
        await new Promise<void>((resolve, reject) => {
          const onAbort = () => {
            slot.waiting.splice(slot.waiting.indexOf(admit), 1);
            reject(signal?.reason);
          };
          const admit = () => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
          };
          slot.waiting.push(admit);
          signal?.addEventListener("abort", onAbort, { once: true });
        });
      } else {
        slot.running++;
      }
      try {
        return await call();
      } finally {
        // The slot passes to the next waiting call, or frees up.
        const next = slot.waiting.shift();
        if (next) next();
        else slot.running--;
      }
    },
    stats(modelId) {
      const slot = slots.get(keyOf(modelId));
      return { running: slot?.running ?? 0, waiting: slot?.waiting.length ?? 0 };
    },
  };
}
