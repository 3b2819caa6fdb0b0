import { describe, expect, it } from "vitest";
import { cachePolicyOf, checkCacheDirective } from "./cache-policy.js";

/** Which TTL a prompt run uses the response cache with (docs/cache.md "Defaults"). */
describe("cachePolicyOf", () => {
  const header = (ttlSeconds: number) => ({ ttlSeconds, noStore: false });
  const noStore = { ttlSeconds: 0, noStore: true };

  it("takes the request's header over every default", () => {
    expect(cachePolicyOf(header(5), { label: 60, version: 120 })).toEqual({ ttlSeconds: 5, source: "request" });
    expect(cachePolicyOf(header(5), {})).toEqual({ ttlSeconds: 5, source: "request" });
  });

  it("turns the cache off with no-store even where defaults exist", () => {
    expect(cachePolicyOf(noStore, { label: 60, version: 120 })).toBeUndefined();
    expect(cachePolicyOf(noStore, {})).toBeUndefined();
  });

  it("without a header: the label's default, else the version's, else none", () => {
    expect(cachePolicyOf(undefined, { label: 60, version: 120 })).toEqual({ ttlSeconds: 60, source: "label" });
    expect(cachePolicyOf(undefined, { version: 120 })).toEqual({ ttlSeconds: 120, source: "version" });
    expect(cachePolicyOf(undefined, {})).toBeUndefined();
    // A directive with nothing in it (ttl 0, not no-store) is no header.
    expect(cachePolicyOf(header(0), { version: 120 })).toEqual({ ttlSeconds: 120, source: "version" });
  });

  it("uses a default only within the header's bounds (1 to 604800 whole seconds)", () => {
    expect(cachePolicyOf(undefined, { label: 604_800 })).toEqual({ ttlSeconds: 604_800, source: "label" });
    expect(cachePolicyOf(undefined, { version: 1 })).toEqual({ ttlSeconds: 1, source: "version" });
    // Out of bounds (never stored by the catalog, but not trusted either): as if absent.
    expect(cachePolicyOf(undefined, { label: 0, version: 30 })).toEqual({ ttlSeconds: 30, source: "version" });
    expect(cachePolicyOf(undefined, { label: 604_801, version: 1.5 })).toBeUndefined();
  });
});

describe("checkCacheDirective", () => {
  it("refuses a directive the gateway would not send, naming Kiln-Cache", () => {
    for (const bad of [
      { ttlSeconds: 604_801, noStore: false },
      { ttlSeconds: -1, noStore: false },
      { ttlSeconds: 1.5, noStore: false },
      { ttlSeconds: 5, noStore: true },
    ]) {
      expect(() => checkCacheDirective(bad)).toThrow(
        expect.objectContaining({ details: [expect.objectContaining({ field: "Kiln-Cache" })] }),
      );
    }
    expect(() => checkCacheDirective({ ttlSeconds: 60, noStore: false })).not.toThrow();
    expect(() => checkCacheDirective(undefined)).not.toThrow();
  });
});
