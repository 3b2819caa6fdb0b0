import { invalidArgument } from "./errors.js";
import type { Collection, Doc, Filter } from "./store/store.js";

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 200;

export interface Page<T> {
  items: T[];
  /** Empty when this is the last page. */
  nextCursor: string;
}

/** `limit` 0 is the default; anything outside 1..MAX_PAGE_LIMIT is refused. */
function pageLimit(requested: number): number {
  const limit = requested === 0 ? DEFAULT_PAGE_LIMIT : requested;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
    throw invalidArgument("invalid limit", [
      { field: "limit", issue: `must be an integer from 1 to ${MAX_PAGE_LIMIT}` },
    ]);
  }
  return limit;
}

/**
 * Cursors are opaque to clients: the base64url of the last `_id` returned, an id or, for a
 * collection keyed by a pair (memberships: `<organization id>:<user id>`), two ids.
 */
function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!/^[a-z]+_[0-9a-f]{32}(:[a-z]+_[0-9a-f]{32})?$/.test(id)) throw invalidCursor();
  return id;
}

/**
 * One page of a collection, newest first (`oldestFirst`: in creation order). Ids sort by creation
 * time (`@kiln/kit/ids`), so `_id` alone orders and resumes the list; `limit` 0 means the default;
 * `projection` leaves out large fields.
 */
export async function findPage<T extends Doc>(
  collection: Collection<T>,
  filter: Filter,
  options: { limit: number; cursor: string; projection?: Record<string, 0 | 1>; oldestFirst?: boolean },
): Promise<Page<T>> {
  const limit = pageLimit(options.limit);
  const past = options.oldestFirst ? "$gt" : "$lt";
  const scoped = options.cursor ? afterCursor(filter, decodeCursor(options.cursor), past) : filter;
  const docs = await collection.find(scoped, {
    sort: { _id: options.oldestFirst ? 1 : -1 },
    limit: limit + 1,
    ...(options.projection && { projection: options.projection }),
  });
  const items = docs.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: docs.length > limit && last ? Buffer.from(last._id).toString("base64url") : "" };
}

/**
 * The filter and `_id` below the cursor. Merged into the filter's own keys when it has no `_id` of
 * its own: FerretDB 1.24 pushes no top-level `$and` down to its backend, so a page after the first
 * would scan the whole collection instead of the organization's documents (docs/architecture.md
 * "Store backends").
 */
function afterCursor(filter: Filter, lastId: string, past: "$lt" | "$gt"): Filter {
  const below = { [past]: lastId };
  return "_id" in filter ? { $and: [filter, { _id: below }] } : { ...filter, _id: below };
}

const invalidCursor = () =>
  invalidArgument("invalid cursor", [{ field: "cursor", issue: "is not a cursor this list returned" }]);

/** A keyset cursor: the base64url of `[ISO time, _id]` of the last document returned. */
function decodeTimeCursor(cursor: string): [Date, string] {
  try {
    const [time, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    const date = new Date(time as string);
    if (typeof time === "string" && typeof id === "string" && id !== "" && !Number.isNaN(date.getTime()))
      return [date, id];
  } catch {}
  throw invalidCursor();
}

/**
 * One page of a collection ordered by a Date field (`direction` -1: latest first), ties broken by
 * `_id`: for orders that change after creation (a session's latest activity) or that `_id` does not
 * follow (runs of several kinds, whose ids' prefixes differ). The cursor resumes after the last
 * document returned. Its bound is merged into the field's own condition (no top-level `$and`, which
 * FerretDB 1.24 does not push down: docs/architecture.md "Store backends"), including the cursor's
 * instant; the documents of that instant already returned are left out here, reading further when
 * ties filled the read.
 */
export async function findPageByTime<T extends Doc>(
  collection: Collection<T>,
  filter: Filter,
  order: { field: keyof T & string; direction: 1 | -1 },
  options: { limit: number; cursor: string; projection?: Record<string, 0 | 1> },
): Promise<Page<T>> {
  const limit = pageLimit(options.limit);
  const { field, direction } = order;
  const after = options.cursor ? decodeTimeCursor(options.cursor) : undefined;
  const scoped = after ? boundedBy(filter, field, { [direction === -1 ? "$lte" : "$gte"]: after[0] }) : filter;
  const isPast = (d: T) => {
    if (!after) return true;
    const time = (d[field] as Date).getTime();
    const [at, id] = [after[0].getTime(), after[1]];
    if (time !== at) return true;
    return direction === -1 ? d._id < id : d._id > id;
  };
  for (let read = limit + 1; ; read *= 2) {
    const docs = await collection.find(scoped, {
      sort: { [field]: direction, _id: direction },
      limit: read,
      ...(options.projection && { projection: options.projection }),
    });
    const past = docs.filter(isPast);
    // Every document of the read was at or before the cursor's instant and some were dropped: read more.
    if (past.length <= limit && docs.length === read && past.length < docs.length) continue;
    const items = past.slice(0, limit);
    const last = items.at(-1);
    const cursorOf = (d: T) =>
      Buffer.from(JSON.stringify([(d[field] as Date).toISOString(), d._id])).toString("base64url");
    return { items, nextCursor: past.length > limit && last ? cursorOf(last) : "" };
  }
}

/** `filter` with `bound` on `field` too: merged into the field's own operators when they do not clash. */
function boundedBy(filter: Filter, field: string, bound: Record<string, Date>): Filter {
  const own = filter[field];
  if (own === undefined) return { ...filter, [field]: bound };
  const isOperators = typeof own === "object" && own !== null && !(own instanceof Date) && !Array.isArray(own);
  if (isOperators && !Object.keys(bound).some((op) => op in own)) return { ...filter, [field]: { ...own, ...bound } };
  return { $and: [filter, { [field]: bound }] };
}

/**
 * One page of a list already read whole and sorted by `keyOf` (ascending, each key once): lists
 * that are computed rather than stored (the folders of prompt names). The cursor is the base64url
 * of the last key returned, and the next page starts after it, so a page stays right when items
 * before the cursor come or go.
 */
export function pageOfSorted<T>(
  sorted: readonly T[],
  keyOf: (item: T) => string,
  options: { limit: number; cursor: string },
): Page<T> {
  const limit = pageLimit(options.limit);
  let start = 0;
  if (options.cursor) {
    const last = Buffer.from(options.cursor, "base64url").toString("utf8");
    if (last === "" || Buffer.from(last).toString("base64url") !== options.cursor) throw invalidCursor();
    start = sorted.findIndex((item) => keyOf(item) > last);
    if (start === -1) start = sorted.length;
  }
  const items = sorted.slice(start, start + limit);
  const last = items.at(-1);
  const more = start + limit < sorted.length;
  return { items, nextCursor: more && last ? Buffer.from(keyOf(last)).toString("base64url") : "" };
}
