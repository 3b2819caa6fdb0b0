import { LRUCache } from "lru-cache";
import type { PromptVersionDoc, SkillVersionDoc, ToolVersionDoc } from "./store/catalog-store.js";

/** A version document that can never change again. */
export type ImmutableVersion = PromptVersionDoc | ToolVersionDoc | SkillVersionDoc;

export interface VersionCacheOptions {
  /** Most documents kept (default 5 000). */
  maxEntries?: number;
  /** Most characters kept, as the documents' JSON length (default 32 M, so at most ~64 MB). */
  maxChars?: number;
}

/**
 * An in-process LRU of version documents that can never change, keyed by collection and id: published prompt and skill versions (publishing moves a status once and
 * nothing edits a published version) and every tool version (tools have no draft state). Drafts are
 * never cached, nor is anything mutable: which version is published or the draft, prompt and tool
 * names and descriptions, and authorization are read on every call. Because the documents are
 * immutable there is nothing to invalidate, also across replicas.
 *
 * Callers must treat what `get` returns as read-only: it is shared between calls.
 */
export class VersionCache {
  private readonly lru: LRUCache<string, ImmutableVersion>;

  constructor(options: VersionCacheOptions = {}) {
    this.lru = new LRUCache<string, ImmutableVersion>({
      max: options.maxEntries ?? 5_000,
      maxSize: options.maxChars ?? 32_000_000,
      sizeCalculation: (doc) => Math.max(1, JSON.stringify(doc).length),
    });
  }

  get<T extends ImmutableVersion>(collection: string, id: string): T | undefined {
    return this.lru.get(`${collection}/${id}`) as T | undefined;
  }

  /** Keeps `doc` of `collection` when it can never change again; anything else is ignored. */
  remember(collection: string, doc: ImmutableVersion): void {
    if (VersionCache.isImmutable(doc)) this.lru.set(`${collection}/${doc._id}`, doc);
  }

  get size(): number {
    return this.lru.size;
  }

  /** Tool versions always; prompt and skill versions once published. */
  static isImmutable(doc: ImmutableVersion): boolean {
    return !("status" in doc) || doc.status === "published";
  }
}
