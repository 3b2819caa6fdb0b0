import type { Collection } from "@kiln/kit/store";
import { describe, expect, it } from "vitest";
import { createRouteCache } from "./route-cache.js";
import type { ModelRouteDoc } from "./route-store.js";

/** A collection that counts its reads and answers from `docs` (the cache's only call is findOne). */
function countingRoutes(docs: Partial<ModelRouteDoc>[]) {
  const reads: unknown[] = [];
  const collection = {
    findOne: async (filter: { organizationId: string; name: string }) => {
      reads.push(filter);
      return (docs.find((d) => d.organizationId === filter.organizationId && d.name === filter.name) ??
        null) as ModelRouteDoc | null;
    },
  } as unknown as Collection<ModelRouteDoc>;
  return { collection, reads };
}

describe("the route cache", () => {
  it("reads once per organization and name within the TTL, misses included, and again after it or an invalidation", async () => {
    let clock = 0;
    const { collection, reads } = countingRoutes([{ organizationId: "org_a", name: "r" }]);
    const cache = createRouteCache(collection, { ttlMs: 1_000, now: () => clock });
    expect((await cache.get("org_a", "r"))?.name).toBe("r");
    expect(await cache.get("org_b", "r")).toBeNull();
    await cache.get("org_a", "r");
    await cache.get("org_b", "r");
    expect(reads).toHaveLength(2);
    clock = 1_000;
    await cache.get("org_a", "r");
    expect(reads).toHaveLength(3);
    cache.invalidate("org_a");
    await cache.get("org_a", "r");
    expect(reads).toHaveLength(4);
  });
});
