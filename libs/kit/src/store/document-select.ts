/** Reads of the document engine: the documents a filter matches, sorted, paged and projected. */
import { find as mingoFind, Query } from "mingo";
import { assertPortableFilter, assertPortableProjection, assertPortableSort } from "./assert-portable.js";
import type { Stored, Table } from "./document-table.js";
import type { Filter, FindOptions } from "./store.js";

/** Matching stored documents in sort order; a projection returns new objects. */
export function select(table: Table, filter: Filter, options: FindOptions): Stored[] {
  assertPortableFilter(filter);
  if (options.sort) assertPortableSort(options.sort);
  if (options.projection) assertPortableProjection(options.projection);
  const query = new Query(filter);
  const scan = table.scan(filter, options.sort);
  let docs: Stored[];
  if (scan.ordered) {
    // Stop reading as soon as the page is full: the backend hands documents over lazily.
    docs = [];
    let toSkip = options.skip ?? 0;
    // MongoDB reads limit 0 as "no limit".
    const limit = options.limit || Number.POSITIVE_INFINITY;
    for (const doc of scan.docs) {
      if (docs.length >= limit) break;
      if (!query.test(doc)) continue;
      if (toSkip > 0) toSkip--;
      else docs.push(options.projection ? projectOne(doc, options.projection) : doc);
    }
    // Already in order: each document was projected as it was read.
    if (options.projection) return docs;
  } else {
    // One decoded document at a time: only the matching ones are kept, and projected as they are
    // read when the projection keeps the sort's fields (a view listing 200 versions of 300 KB
    // each held all of them at once, and took pnpm start down).
    const early = options.projection && keepsFields(options.projection, Object.keys(options.sort ?? {}));
    const matched: Stored[] = [];
    for (const doc of scan.docs) {
      if (!query.test(doc)) continue;
      matched.push(early ? projectOne(doc, options.projection ?? {}) : doc);
    }
    let cursor = mingoFind<Stored>(matched, {});
    if (options.sort) cursor = cursor.sort(options.sort);
    if (options.skip) cursor = cursor.skip(options.skip);
    if (options.limit) cursor = cursor.limit(options.limit);
    docs = cursor.all();
    if (early) return docs;
  }
  if (!options.projection) return docs;
  // Projected after sorting, so a sort may use a field the projection leaves out.
  return mingoFind<Stored>(docs, {}, options.projection).all();
}

function projectOne(doc: Stored, projection: Record<string, 0 | 1>): Stored {
  return mingoFind<Stored>([doc], {}, projection).all()[0] ?? doc;
}

/** Whether a projection keeps every top-level field of `fields` (an inclusion names them, an exclusion does not). */
function keepsFields(projection: Record<string, 0 | 1>, fields: string[]): boolean {
  const entries = Object.entries(projection).filter(([k]) => k !== "_id");
  const inclusion = entries.some(([, v]) => v === 1);
  return fields.every((f) => {
    const top = f.split(".")[0] ?? f;
    if (top === "_id") return projection._id !== 0;
    const named = entries.some(([k]) => k === top || k.startsWith(`${top}.`));
    return inclusion ? projection[top] === 1 : !named;
  });
}
