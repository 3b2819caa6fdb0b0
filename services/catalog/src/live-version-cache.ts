import { LRUCache } from "lru-cache";
import type { PromptDoc, SkillDoc } from "./store/catalog-store.js";

export interface LiveEntry<P> {
  /** The prompt or skill document (name, organization). */
  parent: P;
  /** Its live published version. */
  versionId: string;
}

export interface LiveVersionCacheOptions {
  /** How long an entry is used (0 turns the cache off); default 1 000 ms. */
  ttlMs?: number;
  /** Most entries kept; default 10 000. */
  maxEntries?: number;
  now?: () => Date;
}

/** Taken before a read whose result may be remembered (`LiveVersionCache.stamp`). */
export interface LiveStamp {
  evictions: number;
  generation: number;
}

/**
 * Which version of a prompt or skill is live, with the prompt or skill itself: what a run resolves
 * on every call that the `VersionCache` cannot hold, because publishing and renaming change it.
 * This replica's own publishes and updates evict the entry before they answer, so here a publish
 * takes effect at once; other catalog replicas reuse an entry for at most `ttlMs`, which is the
 * bound on how long they may still run the previously published version (as API_KEY_CACHE_TTL_MS
 * bounds revocation at other gateways). Nothing without a published version is kept.
 *
 * Across replicas, a caller that names the change counter it has seen (`atLeast`, the resolve
 * requests' min_generation) never gets an entry read before the counter reached it: each entry
 * keeps the counter known when its read began, and one older than the highest counter asked for
 * is not used. A caller that names none gets the `ttlMs` bound.
 */
export class LiveVersionCache {
  private readonly lru: LRUCache<string, LiveEntry<PromptDoc | SkillDoc> & { expiresAtMs: number; generation: number }>;
  private readonly ttlMs: number;
  private readonly now: () => Date;
  /** Counts evictions: a read that began before one must not remember what it read. */
  private evictions = 0;
  /** The highest change counter a caller has said it saw: every write before it is in the store. */
  private generation = 0;

  constructor(options: LiveVersionCacheOptions = {}) {
    this.ttlMs = options.ttlMs ?? 1_000;
    this.now = options.now ?? (() => new Date());
    this.lru = new LRUCache({ max: options.maxEntries ?? 10_000 });
  }

  prompt(promptId: string): LiveEntry<PromptDoc> | undefined {
    return this.get(`prompt/${promptId}`) as LiveEntry<PromptDoc> | undefined;
  }

  skill(skillId: string): LiveEntry<SkillDoc> | undefined {
    return this.get(`skill/${skillId}`) as LiveEntry<SkillDoc> | undefined;
  }

  /**
   * Raises the counter entries must have been read at to `generation` (when higher) and answers
   * it: what this replica answers from now on holds every write made before the counter got there.
   */
  atLeast(generation: number): number {
    if (generation > this.generation) this.generation = generation;
    return this.generation;
  }

  /** Taken before reading what will be remembered: `remember*` ignores it if anything was forgotten since. */
  stamp(): LiveStamp {
    return { evictions: this.evictions, generation: this.generation };
  }

  rememberPrompt(parent: PromptDoc, versionId: string, stamp: LiveStamp): void {
    this.set(`prompt/${parent._id}`, { parent, versionId }, stamp);
  }

  rememberSkill(parent: SkillDoc, versionId: string, stamp: LiveStamp): void {
    this.set(`skill/${parent._id}`, { parent, versionId }, stamp);
  }

  /** Called by every change of what an entry holds (publishing, renaming), before it answers. */
  forgetPrompt(promptId: string): void {
    this.evictions++;
    this.lru.delete(`prompt/${promptId}`);
  }

  forgetSkill(skillId: string): void {
    this.evictions++;
    this.lru.delete(`skill/${skillId}`);
  }

  private get(key: string): LiveEntry<PromptDoc | SkillDoc> | undefined {
    const entry = this.lru.get(key);
    if (!entry) return undefined;
    if (entry.expiresAtMs <= this.now().getTime() || entry.generation < this.generation) {
      this.lru.delete(key);
      return undefined;
    }
    return entry;
  }

  private set(key: string, entry: LiveEntry<PromptDoc | SkillDoc>, stamp: LiveStamp): void {
    if (this.ttlMs > 0 && stamp.evictions === this.evictions) {
      const expiresAtMs = this.now().getTime() + this.ttlMs;
      this.lru.set(key, { ...entry, expiresAtMs, generation: stamp.generation });
    }
  }
}
