import { createMemoryBus } from "@kiln/kit/bus/memory";
import { createLogger } from "@kiln/kit/logger";
import { describe, expect, it } from "vitest";
import { createOrgCache, rulesGeneration } from "./org-cache.js";

const logger = createLogger({ name: "test", level: "silent" });

describe("the per-organization rule cache", () => {
  it("reads an organization once until a rule changes in any process, then afresh in every one", async () => {
    const bus = createMemoryBus();
    const generation = await rulesGeneration(bus, logger);
    let stored = ["rule 1"];
    const reads: string[] = [];
    // Two processes on one bus, each with its own cache.
    const [a, b] = ["a", "b"].map((name) =>
      createOrgCache(
        async (organizationId) => {
          reads.push(`${name}:${organizationId}`);
          return [...stored];
        },
        generation,
        logger,
      ),
    ) as [ReturnType<typeof createOrgCache<string[]>>, ReturnType<typeof createOrgCache<string[]>>];
    expect(await a.get("org_1")).toEqual(["rule 1"]);
    expect(await a.get("org_1")).toEqual(["rule 1"]);
    expect(await b.get("org_1")).toEqual(["rule 1"]);
    expect(reads).toEqual(["a:org_1", "b:org_1"]);
    stored = ["rule 1", "rule 2"];
    await a.changed("org_1");
    // The other process sees the change at its next event, not a TTL later.
    expect(await b.get("org_1")).toEqual(["rule 1", "rule 2"]);
    expect(await a.get("org_1")).toEqual(["rule 1", "rule 2"]);
    expect(reads).toEqual(["a:org_1", "b:org_1", "b:org_1", "a:org_1"]);
    await bus.close();
  });

  it("reads the store for every event while the bus does not answer", async () => {
    const bus = createMemoryBus();
    const generation = await rulesGeneration(bus, logger);
    let reads = 0;
    const cache = createOrgCache(
      async () => {
        reads++;
        return [];
      },
      { ...generation, current: () => Promise.reject(new Error("bus down")) },
      logger,
    );
    await cache.get("org_1");
    await cache.get("org_1");
    expect(reads).toBe(2);
    await bus.close();
  });
});
