import { invalidArgument } from "./errors.js";
import type { Collection, Doc, Filter } from "./store/store.js";

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 200;

export interface Page<T> {
  items: T[];
  /** Empty when this is the last page. */
  nextCursor: string;
}

/**
 * Cursors are opaque to clients: the base64url of the last `_id` returned, an id or, for a
 * collection keyed by a pair (memberships: `<organization id>:<user id>`), two ids.
 */
function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!/^[a-z]+_[0-9a-f]{32}(:[a-z]+_[0-9a-f]{32})?$/.test(id))
    throw invalidArgument("invalid cursor", [{ field: "cursor", issue: "is not a cursor this list returned" }]);
  return id;
}

/**
 * One page of a collection, newest first. Ids sort by creation time (`@kiln/kit/ids`), so `_id`
 * alone orders and resumes the list; `limit` 0 means the default; `projection` leaves out large fields.
 */
export async function findPage<T extends Doc>(
  collection: Collection<T>,
  filter: Filter,
  options: { limit: number; cursor: string; projection?: Record<string, 0 | 1> },
): Promise<Page<T>> {
  const limit = options.limit === 0 ? DEFAULT_PAGE_LIMIT : options.limit;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
    throw invalidArgument("invalid limit", [
      { field: "limit", issue: `must be an integer from 1 to ${MAX_PAGE_LIMIT}` },
    ]);
  }
  const scoped = options.cursor ? { $and: [filter, { _id: { $lt: decodeCursor(options.cursor) } }] } : filter;
  const docs = await collection.find(scoped, {
    sort: { _id: -1 },
    limit: limit + 1,
    ...(options.projection && { projection: options.projection }),
  });
  const items = docs.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: docs.length > limit && last ? Buffer.from(last._id).toString("base64url") : "" };
}
