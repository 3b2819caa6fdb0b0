/**
 * An LRU cache in front of a call (lru-cache's `fetch`): a hit answers at once, and concurrent
 * misses of one key share one call instead of each making its own — under load, the hundreds of
 * requests that miss an expired entry at once would otherwise all call. A rejected call reaches
 * every caller waiting for it and is not cached.
 */
import { LRUCache } from "lru-cache";

export interface CallCache<V extends {}> {
  /** The cached value of `key`, else what `call` answers (one call for concurrent misses). */
  get(key: string, call: () => Promise<V>): Promise<V>;
  /** Drops `key`: its next `get` calls again. */
  forget(key: string): void;
}

export function createCallCache<V extends {}>(options: {
  max: number;
  ttl?: number;
  maxSize?: number;
  sizeCalculation?: (value: V, key: string) => number;
}): CallCache<V> {
  const cache = new LRUCache<string, V, () => Promise<V>>({
    ...options,
    fetchMethod: (_key, _stale, { context }) => context(),
  });
  return {
    async get(key, call) {
      const value = await cache.fetch(key, { context: call });
      // fetchMethod never answers undefined: the calls resolve to values.
      if (value === undefined) throw new Error(`no value for ${key}`);
      return value;
    },
    forget: (key) => {
      cache.delete(key);
    },
  };
}
