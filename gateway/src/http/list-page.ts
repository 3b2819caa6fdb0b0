import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { CallOptions } from "@connectrpc/connect";
import type { FastifyRequest } from "fastify";
import { HttpError } from "../errors.js";
import { rpcOptions } from "./request.js";

/** The pieces of every list route (api.md "Conventions": `?limit=&cursor=` in, `{ data, nextCursor }` out). */

/** The RPC's limit and cursor from a list route's query (limit 0: the service's default). */
export function pageOf(query: { limit?: string; cursor?: string }): { limit: number; cursor: string } {
  return { limit: query.limit ? Number(query.limit) : 0, cursor: query.cursor ?? "" };
}

/** A list filter's ISO-8601 date-time as the RPC's timestamp (unset: undefined); 400 naming `field` otherwise. */
/** A list query's text filters as the list RPCs take them: "" where the query has none. */
export function textFiltersOf<Q extends Partial<Record<K, string>>, K extends string>(
  query: Q,
  ...names: K[]
): Record<K, string> {
  return Object.fromEntries(names.map((name) => [name, query[name] ?? ""])) as Record<K, string>;
}

export function timeFilterOf(field: string, value: string | undefined) {
  if (value === undefined) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) {
    throw new HttpError("invalid_argument", `invalid ${field}`, [{ field, issue: "must be an ISO-8601 date-time" }]);
  }
  return timestampFromDate(new Date(at));
}

/** `{ data, nextCursor }` of a page: its items through their view; no cursor (the last page) is null. */
export function listPage<T, V>(items: readonly T[], view: (item: T) => V, nextCursor = "") {
  return { data: items.map((item) => view(item)), nextCursor: nextCursor || null };
}

/** Every item of a paged RPC, page after page (`page` fetches the page at a cursor). */
export async function everyPage<T>(page: (cursor: string) => Promise<{ items: T[]; nextCursor: string }>) {
  const out: T[] = [];
  let cursor = "";
  do {
    const next = await page(cursor);
    out.push(...next.items);
    cursor = next.nextCursor;
  } while (cursor);
  return out;
}

type PageRequest = ReturnType<typeof pageOf>;
type PageAnswer = { nextCursor: string };

/**
 * The handler of a route that lists, a page at a time, what belongs to its `:id`: `call` asks the
 * service for that page with the id in the request field `idField`; the answer's `itemsField`
 * holds the page's items, each shown through `view`.
 */
export function pageById<K extends string, I extends string, T, V>(
  call: (request: Record<K, string> & PageRequest, options: CallOptions) => Promise<Record<I, T[]> & PageAnswer>,
  idField: K,
  itemsField: I,
  view: (item: T) => V,
) {
  return async (request: FastifyRequest & { params: { id: string }; query: { limit?: string; cursor?: string } }) => {
    const owner = { [idField]: request.params.id } as Record<K, string>;
    const r = await call({ ...owner, ...pageOf(request.query) }, rpcOptions(request));
    const items: Record<I, T[]> = r;
    return listPage(items[itemsField], view, r.nextCursor);
  };
}
