/** Rules shared by every versioned resource of the catalog (prompts, tools, skills). */

export interface VersionLike {
  _id: string;
  version: number;
  status: "draft" | "published";
  publishedAt: Date | null;
}

/**
 * The live published version: the one published last (a version stays published after a newer one
 * is, api.md "Prompts"); ties go to the higher version number. Derived from the versions rather
 * than kept as a pointer, so concurrent publishes can never leave a stale pointer behind.
 */
export function livePublishedVersion<T extends VersionLike>(versions: readonly T[]): T | undefined {
  let live: T | undefined;
  for (const v of versions) {
    if (v.status !== "published" || !v.publishedAt) continue;
    if (
      !live?.publishedAt ||
      v.publishedAt.getTime() > live.publishedAt.getTime() ||
      (v.publishedAt.getTime() === live.publishedAt.getTime() && v.version > live.version)
    ) {
      live = v;
    }
  }
  return live;
}

/**
 * The order `livePublishedVersion` picks by, as a query sort: with `{status: "published"}` and
 * `limit: 1` the store returns the live published version without reading the others.
 */
export const LIVE_PUBLISHED_SORT = { publishedAt: -1, version: -1 } as const;

/** Highest-numbered version. */
export function latestVersion<T extends { version: number }>(versions: readonly T[]): T | undefined {
  return versions.reduce<T | undefined>((best, v) => (!best || v.version > best.version ? v : best), undefined);
}

export function byVersionAscending<T extends { version: number }>(a: T, b: T): number {
  return a.version - b.version;
}
