/** What a filter pins, which a backend may look up in an index or a key range instead of scanning. */
import { isPlainObject } from "./assert-portable.js";
import type { Filter } from "./store.js";

/**
 * The fields a filter pins to one value by plain equality (top level, or inside a top-level `$and`):
 * what a backend may look up in an index. Only scalars count: an equality on an array or object
 * matches elements and whole values in ways an index key does not.
 */
export function equalitiesOf(filter: Filter): Map<string, unknown> {
  const found = new Map<string, unknown>();
  const visit = (f: Filter) => {
    for (const [key, value] of Object.entries(f)) {
      if (key === "$and" && Array.isArray(value)) {
        for (const part of value) if (isPlainObject(part)) visit(part);
      } else if (!key.startsWith("$") && isScalar(value) && !found.has(key)) {
        found.set(key, value);
      }
    }
  };
  visit(filter);
  return found;
}

/**
 * The fields a filter pins to one of a few values with `{$in: [scalars]}` alone (top level, or
 * inside a top-level `$and`): what a backend may look up in an index, one key per value.
 */
export function inListsOf(filter: Filter): Map<string, unknown[]> {
  const found = new Map<string, unknown[]>();
  const visit = (f: Filter) => {
    for (const [key, value] of Object.entries(f)) {
      if (key === "$and" && Array.isArray(value)) {
        for (const part of value) if (isPlainObject(part)) visit(part);
      } else if (!key.startsWith("$") && isPlainObject(value) && !found.has(key)) {
        const list = value.$in;
        if (Object.keys(value).length === 1 && Array.isArray(list) && list.every(isScalar)) found.set(key, list);
      }
    }
  };
  visit(filter);
  return found;
}

function isScalar(value: unknown): boolean {
  return (
    value === null ||
    typeof value === "string" ||
    typeof value === "boolean" ||
    (typeof value === "number" && Number.isFinite(value)) ||
    value instanceof Date
  );
}

/** Bounds on `_id` that a filter sets with $gt/$gte/$lt/$lte on strings (top level or in `$and`). */
export function idBoundsOf(filter: Filter): { gt?: string; gte?: string; lt?: string; lte?: string } {
  const bounds: { gt?: string; gte?: string; lt?: string; lte?: string } = {};
  const visit = (f: Filter) => {
    for (const [key, value] of Object.entries(f)) {
      if (key === "$and" && Array.isArray(value)) {
        for (const part of value) if (isPlainObject(part)) visit(part);
      } else if (key === "_id" && isPlainObject(value)) {
        for (const op of ["gt", "gte", "lt", "lte"] as const) {
          const bound = value[`$${op}`];
          if (typeof bound !== "string") continue;
          const current = bounds[op];
          const tighter = current === undefined || (op.startsWith("g") ? bound > current : bound < current);
          if (tighter) bounds[op] = bound;
        }
      }
    }
  };
  visit(filter);
  return bounds;
}
