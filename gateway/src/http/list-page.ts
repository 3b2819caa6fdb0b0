/** The pieces of every list route (api.md "Conventions": `?limit=&cursor=` in, `{ data, nextCursor }` out). */

/** The RPC's limit and cursor from a list route's query (limit 0: the service's default). */
export function pageOf(query: { limit?: string; cursor?: string }): { limit: number; cursor: string } {
  return { limit: query.limit ? Number(query.limit) : 0, cursor: query.cursor ?? "" };
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
