/**
 * The routes runs resolve through, cached per organization and name (docs/providers.md "Routes"):
 * a write through this process drops the organization's entries at once; another process's write
 * is seen within `ttlMs` (ROUTE_CACHE_TTL_MS, default 5 s), the bound of a stale read.
 */
import type { Collection } from "@kiln/kit/store";
import type { ModelRouteDoc } from "./route-store.js";

export const DEFAULT_ROUTE_CACHE_TTL_MS = 5_000;

export interface RouteCache {
  /** The organization's route of that name, or null (a miss is cached too). */
  get(organizationId: string, name: string): Promise<ModelRouteDoc | null>;
  /** Drops what is cached for the organization (after a create, update or delete). */
  invalidate(organizationId: string): void;
}

export function createRouteCache(
  routes: Collection<ModelRouteDoc>,
  options: { ttlMs?: number; now?: () => number } = {},
): RouteCache {
  const ttlMs = options.ttlMs ?? DEFAULT_ROUTE_CACHE_TTL_MS;
  const now = options.now ?? Date.now;
  const byOrg = new Map<string, Map<string, { at: number; doc: Promise<ModelRouteDoc | null> }>>();
  return {
    get(organizationId, name) {
      let names = byOrg.get(organizationId);
      if (!names) {
        names = new Map();
        byOrg.set(organizationId, names);
      }
      const hit = names.get(name);
      if (hit && now() - hit.at < ttlMs) return hit.doc;
      const doc = routes.findOne({ organizationId, name });
      const entry = { at: now(), doc };
      names.set(name, entry);
      // A failed read is not kept.
      doc.catch(() => {
        if (names.get(name) === entry) names.delete(name);
      });
      return doc;
    },
    invalidate(organizationId) {
      byOrg.delete(organizationId);
    },
  };
}
