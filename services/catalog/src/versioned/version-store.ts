/**
 * How every versioned family keeps its versions: numbering a new one under concurrent writers,
 * listing them by summary, and reading whole only the one a view describes.
 */
import { DomainError } from "@kiln/kit/errors";
import { type Collection, type Doc, type Filter, isDuplicateKeyError } from "@kiln/kit/store";
import { LRUCache } from "lru-cache";

const MAX_VERSION_ATTEMPTS = 25;

/**
 * The version this process last numbered, per parent: the next number is read from it instead of
 * from every version of the parent (each of which the embedded store and FerretDB decode whole: a
 * prompt's 400th version at the text limit took 1.4 s to number). It is checked, not trusted: the
 * version must still exist (an undone import may have removed it), and a clash with a number
 * another replica took sends the next attempt to the versions themselves.
 */
const lastNumbered = new WeakMap<object, LRUCache<string, { version: number; id: string }>>();

async function highestVersion<T extends Doc & { version: number }>(
  collection: Collection<T>,
  parent: Filter,
  known: { version: number; id: string } | undefined,
): Promise<number> {
  if (known && (await collection.findOne({ _id: known.id }, { projection: { _id: 1 } }))) return known.version;
  // The number alone: a parent's versions are not kept whole to find the highest.
  const [last] = await collection.find(parent, { sort: { version: -1 }, limit: 1, projection: { _id: 1, version: 1 } });
  return last?.version ?? 0;
}

/**
 * Inserts the next version of a parent: number = highest + 1, and on a clash with a concurrent
 * writer (unique index on parent + version) reads again and retries with the next number.
 */
export async function insertNextVersion<T extends { _id: string; version: number }>(
  collection: Collection<T>,
  parent: Filter,
  build: (version: number) => T,
): Promise<T> {
  let numbered = lastNumbered.get(collection);
  if (!numbered) {
    numbered = new LRUCache({ max: 10_000 });
    lastNumbered.set(collection, numbered);
  }
  const key = JSON.stringify(parent);
  for (let attempt = 0; attempt < MAX_VERSION_ATTEMPTS; attempt++) {
    const doc = build((await highestVersion(collection, parent, numbered.get(key))) + 1);
    try {
      await collection.insertOne(doc);
      numbered.set(key, { version: doc.version, id: doc._id });
      return doc;
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
      numbered.delete(key);
      // Spread the contenders out a little before they read again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * (attempt + 1)));
    }
  }
  throw new DomainError("unavailable", "too many concurrent version changes; retry");
}

/**
 * The fields a list of versions needs: a view lists every version by these and describes one,
 * read whole (`wholeVersions`). A prompt's 200 versions of 300 KB each, read whole for every view,
 * took the catalog past its heap bound. The summaries are typed as the documents they come from;
 * only these fields are there.
 */
export const VERSION_SUMMARY = {
  _id: 1,
  version: 1,
  status: 1,
  createdAt: 1,
  publishedAt: 1,
  organizationId: 1,
  createdBy: 1,
  message: 1,
  // The parent, whichever family the version is of (a list groups versions by it).
  promptId: 1,
  toolId: 1,
  skillId: 1,
  agentId: 1,
} as const;

/** Summaries of the versions matching `filter` (one parent or several), in version order. */
export function versionSummaries<T extends Doc>(collection: Collection<T>, filter: Filter): Promise<T[]> {
  return collection.find(filter, { sort: { version: 1 }, projection: VERSION_SUMMARY });
}

/**
 * Each view with the version it describes (its `field`) read whole, one read for all of them.
 */
export async function wholeVersions<V extends Doc, K extends string, W extends { [key in K]: V | null }>(
  collection: Collection<V>,
  views: W[],
  field: K,
): Promise<W[]> {
  const ids = [...new Set(views.flatMap((view) => (view[field] ? [view[field]._id] : [])))];
  if (ids.length === 0) return views;
  const whole = new Map((await collection.find({ _id: { $in: ids } })).map((v) => [v._id, v]));
  return views.map((view) => {
    const full = view[field] ? whole.get(view[field]._id) : undefined;
    return full ? { ...view, [field]: full } : view;
  });
}

/** One view with the version it describes read whole. */
export async function wholeVersion<V extends Doc, K extends string, W extends { [key in K]: V | null }>(
  collection: Collection<V>,
  view: W,
  field: K,
): Promise<W> {
  return (await wholeVersions(collection, [view], field))[0] ?? view;
}
