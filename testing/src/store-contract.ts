/**
 * The behaviour every `Store` backend must share: run by memory-store.test.ts
 * against mingo and by mongo-store.int.test.ts against FerretDB. Each test uses its own collection.
 * Order among equal sort keys is unspecified on the servers, so sorts here always end on `_id`.
 */
import type { Collection, Doc, Store } from "@kiln/kit/store";
import { afterAll, beforeAll, describe } from "vitest";
import type { StoreUnderTest } from "./store-contract-fixtures.js";
import { describeStoreReads } from "./store-contract-reads.js";
import { describeStoreValues } from "./store-contract-values.js";
import { describeStoreWrites } from "./store-contract-writes.js";

export function describeStoreContract(
  name: string,
  makeStore: () => Promise<{ store: Store; cleanup: () => Promise<void> }>,
): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeAll(async () => {
      ({ store, cleanup } = await makeStore());
    });
    afterAll(async () => {
      await cleanup();
    });

    const t: StoreUnderTest = {
      get store() {
        return store;
      },
      async seeded<T extends Doc>(collection: string, docs: T[]): Promise<Collection<T>> {
        const c = store.collection<T>(collection);
        await c.insertMany(docs);
        return c;
      },
    };
    describeStoreReads(t);
    describeStoreValues(t);
    describeStoreWrites(t);
  });
}
