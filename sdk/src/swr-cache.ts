/**
 * An in-memory cache that serves stale values while it revalidates them (stale-while-revalidate):
 * a value younger than its TTL is answered as it is; an older one is answered at once and loaded
 * again in the background; an absent one is loaded and awaited. Loads of one key are shared, so
 * concurrent callers make one request. A failed background load keeps the stale value (the next
 * call tries again). At most `maxEntries` keys are kept, the least recently used dropped first.
 */

/** How a value was answered: from the cache (fresh or stale) or by a load the caller awaited. */
export type CacheState = "fresh" | "stale" | "loaded";

interface Entry<T> {
  value: T;
  storedAt: number;
}

export interface SwrCacheOptions {
  /** Default 1,000. */
  maxEntries?: number;
  /** Milliseconds since the epoch; default Date.now (tests give their own clock). */
  now?: () => number;
}

export class SwrCache<T> {
  readonly #entries = new Map<string, Entry<T>>();
  readonly #loading = new Map<string, Promise<T>>();
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: SwrCacheOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 1_000;
    this.#now = options.now ?? (() => Date.now());
  }

  /**
   * The value of `key`: cached when younger than `ttlMs`, cached and reloaded in the background
   * when older, else loaded. `load` gets the value it replaces (if any), so that it may keep it.
   */
  async get(key: string, ttlMs: number, load: (previous: T | undefined) => Promise<T>): Promise<[T, CacheState]> {
    const entry = this.#entries.get(key);
    if (entry === undefined) return [await this.#load(key, load, undefined), "loaded"];
    // Used now: it moves to the end of the eviction order.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    if (this.#now() - entry.storedAt < ttlMs) return [entry.value, "fresh"];
    this.#load(key, load, entry.value).catch(() => {
      // The stale value stays; the next call after the TTL tries again.
    });
    return [entry.value, "stale"];
  }

  #load(key: string, load: (previous: T | undefined) => Promise<T>, previous: T | undefined): Promise<T> {
    const running = this.#loading.get(key);
    if (running) return running;
    const loading = load(previous)
      .then((value) => {
        this.#store(key, value);
        return value;
      })
      .finally(() => this.#loading.delete(key));
    this.#loading.set(key, loading);
    return loading;
  }

  #store(key: string, value: T): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, storedAt: this.#now() });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
  }
}
