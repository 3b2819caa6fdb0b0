import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Principal } from "@kiln/kit/principal";
import type { Store } from "@kiln/kit/store";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { createSqliteStore } from "@kiln/kit/store/sqlite";
import { describe, expect, it } from "vitest";
import type { Access } from "../access.js";
import { createDatasetItems } from "./dataset-items.js";
import { datasetCollections, ensureDatasetIndexes } from "./dataset-store.js";
import { createDatasets } from "./datasets.js";
import type { ItemSources } from "./item-sources.js";

const principal: Principal = { type: "user", id: "usr_1" };
/** Every caller may act in org_a; elsewhere the resource is not found, as kit's authorizeOnResource answers. */
const access = {
  async onResource(_p: Principal, organizationId: string) {
    if (organizationId !== "org_a") throw Object.assign(new Error("not found"), { kind: "not_found" });
  },
} as unknown as Access;
const noSources: ItemSources = { itemsOf: async () => ({ items: [], issues: [] }) };

const backends: [string, () => Promise<Store>][] = [
  ["memory", async () => createMemoryStore()],
  ["SQLite", async () => createSqliteStore({ path: join(await mkdtemp(join(tmpdir(), "h-datasets-")), "store.db") })],
];

describe.each(backends)("dataset items on the %s store", (_name, open) => {
  async function setUp() {
    const store = await open();
    await ensureDatasetIndexes(store);
    const collections = datasetCollections(store);
    const datasets = createDatasets({ collections, access, now: () => new Date() });
    const items = createDatasetItems({ collections, datasets, sources: noSources, now: () => new Date() });
    const d = await datasets.createDataset(principal, { organizationId: "org_a", name: "d", description: "" });
    return { datasets, items, d };
  }

  it("reads every version as it was, a page at a time in the order items were added", async () => {
    const { datasets, items, d } = await setUp();
    const first = await items.addItems(principal, {
      datasetId: d._id,
      items: [0, 1, 2].map((n) => ({ input: { n } })),
    });
    await items.addItems(principal, { datasetId: d._id, items: [{ input: { n: 3 } }] });
    await items.removeItem(principal, { datasetId: d._id, itemId: first.items[1]?._id ?? "" });
    const read = async (version: number) => {
      const seen: unknown[] = [];
      let cursor = "";
      do {
        const page = await items.listItems(principal, { datasetId: d._id, version, limit: 1, cursor });
        seen.push(...page.items.map((i) => JSON.parse(i.inputJson).n));
        cursor = page.nextCursor;
      } while (cursor);
      return seen;
    };
    expect(await read(1)).toEqual([0, 1, 2]);
    expect(await read(2)).toEqual([0, 1, 2, 3]);
    expect(await read(3)).toEqual([0, 2, 3]);
    expect(await read(0)).toEqual([0, 2, 3]);
    expect(await datasets.getDataset(principal, { id: d._id })).toMatchObject({ version: 3, itemCount: 3 });
    expect((await items.itemIdsAt("org_a", d._id, 1)).itemIds).toEqual(first.items.map((i) => i._id));
    await expect(items.itemIdsAt("org_b", d._id, 1)).rejects.toMatchObject({ kind: "invalid_argument" });
  });

  it("takes one number per change when changes race, and deletes a dataset's items with it", async () => {
    const { datasets, items, d } = await setUp();
    const added = await Promise.all(
      [0, 1, 2, 3].map((n) => items.addItems(principal, { datasetId: d._id, items: [{ input: { n } }] })),
    );
    expect(added.map((a) => a.dataset.version).sort()).toEqual([1, 2, 3, 4]);
    expect(await datasets.getDataset(principal, { id: d._id })).toMatchObject({ version: 4, itemCount: 4 });
    await datasets.deleteDataset(principal, { id: d._id });
    await expect(datasets.getDataset(principal, { id: d._id })).rejects.toMatchObject({ kind: "not_found" });
  });
});
