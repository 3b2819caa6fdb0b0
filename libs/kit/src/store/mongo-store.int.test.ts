import { createServer } from "node:net";
import { describeStoreContract } from "@kiln/testing/store-contract";
import { MongoClient } from "mongodb";
import { describe, expect, inject, it } from "vitest";
import { createMongoStore } from "./mongo-store.js";
import { StoreUnavailableError } from "./store.js";

const url = inject("mongoUrl");
const databasePrefix = `kit_store_${Date.now()}`;
let databases = 0;

describeStoreContract("mongo", async () => {
  const database = `${databasePrefix}_${++databases}`;
  const store = createMongoStore({ url, database, appName: "kit-store-test" });
  const cleanup = async () => {
    await store.close();
    const admin = new MongoClient(url);
    try {
      await admin.db(database).dropDatabase();
    } finally {
      await admin.close();
    }
  };
  return { store, cleanup };
});

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== "object" || !address) throw new Error("no port");
  return address.port;
}

describe("createMongoStore", () => {
  it("ping resolves against the server", async () => {
    const store = createMongoStore({ url, database: `${databasePrefix}_ping` });
    try {
      await expect(store.ping()).resolves.toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it("creates a store and its collections without connecting, and ping then rejects quickly on a closed port", async () => {
    const port = await closedPort();
    const store = createMongoStore({
      url: `mongodb://127.0.0.1:${port}/?directConnection=true`,
      database: "unreachable",
      serverSelectionTimeoutMs: 1_000,
    });
    const items = store.collection("items");
    expect(items.name).toBe("items");
    const startedMs = Date.now();
    await expect(store.ping()).rejects.toThrow(/ECONNREFUSED|Server selection timed out/);
    await expect(items.findOne({ _id: "x" })).rejects.toThrow();
    expect(Date.now() - startedMs).toBeLessThan(5_000);
    await store.close();
  });

  it("fails an operation with StoreUnavailableError within seconds while the server is away, not after the driver's 30 s", async () => {
    const port = await closedPort();
    const store = createMongoStore({ url: `mongodb://127.0.0.1:${port}/?directConnection=true`, database: "away" });
    try {
      const startedMs = Date.now();
      await expect(store.collection("items").insertOne({ _id: "x" })).rejects.toBeInstanceOf(StoreUnavailableError);
      // The default is 5 s; the bound is generous for a loaded machine and still far below 30 s.
      expect(Date.now() - startedMs).toBeLessThan(15_000);
    } finally {
      await store.close();
    }
  }, 45_000);
});
