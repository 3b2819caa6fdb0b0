/**
 * The catalog's live-version cache across replicas: an entry read before the change counter a
 * caller has seen is never answered to it (nor to anyone after it), whatever its time to live.
 */
import { describe, expect, it } from "vitest";
import { LiveVersionCache } from "./live-version-cache.js";
import type { PromptDoc } from "./store/catalog-store.js";

const prompt = { _id: "prm_1", organizationId: "org_1", name: "p" } as PromptDoc;

describe("LiveVersionCache", () => {
  it("drops an entry read before the counter a caller has seen, and keeps one read at it", () => {
    const live = new LiveVersionCache({ ttlMs: 60_000 });
    expect(live.atLeast(3)).toBe(3);
    live.rememberPrompt(prompt, "pv_1", live.stamp());
    expect(live.prompt("prm_1")?.versionId).toBe("pv_1");
    // A caller saw counter 4 (a publish through another replica): what was read at 3 may be older.
    expect(live.atLeast(4)).toBe(4);
    expect(live.prompt("prm_1")).toBeUndefined();
    live.rememberPrompt(prompt, "pv_2", live.stamp());
    // A caller of an older counter does not lower it.
    expect(live.atLeast(2)).toBe(4);
    expect(live.prompt("prm_1")?.versionId).toBe("pv_2");
  });

  it("does not remember a read that began before the counter moved past it", () => {
    const live = new LiveVersionCache({ ttlMs: 60_000 });
    const stamp = live.stamp();
    live.atLeast(1);
    live.rememberPrompt(prompt, "pv_1", stamp);
    expect(live.prompt("prm_1")).toBeUndefined();
  });
});
