/**
 * Idempotency records on the MongoDB protocol (FerretDB 1.24 here): the TTL indexes are asked for
 * and, as FerretDB has none, made plain (the sweep alone deletes there); the sweep with a moved
 * clock deletes what is older than 24 h and keeps the rest.
 */
import { MongoClient } from "mongodb";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createMongoStore } from "../store/mongo-store.js";
import { ensureIdempotencyIndexes, sweepIdempotencyRecords } from "./idempotency-interceptor.js";
import { createOwnerLeases, OWNER_LEASE_GRACE_MS, OWNER_LEASE_MS } from "./idempotency-leases.js";

const url = inject("mongoUrl");
const database = `kit_idempotency_${Date.now()}`;
const store = createMongoStore({ url, database });

afterAll(async () => {
  await store.close();
  const admin = new MongoClient(url);
  await admin.db(database).dropDatabase();
  await admin.close();
});

const HOUR = 3_600_000;

describe("idempotency records on MongoDB (FerretDB)", () => {
  it("get createdAt indexes (TTL where the server has them) and are swept after 24 h", async () => {
    await ensureIdempotencyIndexes(store);
    // Twice: the second finds them made.
    await ensureIdempotencyIndexes(store);
    const client = new MongoClient(url);
    try {
      for (const name of ["idempotency_keys", "idempotency_responses"]) {
        const indexes = await client.db(database).collection(name).listIndexes().toArray();
        expect(
          indexes.filter((i) => JSON.stringify(i.key) === '{"createdAt":1}'),
          name,
        ).toHaveLength(1);
      }
    } finally {
      await client.close();
    }
    const t0 = new Date("2026-01-01T00:00:00Z");
    const keys = store.collection<{ _id: string; createdAt: Date }>("idempotency_keys");
    const answers = store.collection<{ _id: string; response: string; createdAt: Date }>("idempotency_responses");
    for (const [id, at] of [
      ["old", t0],
      ["young", new Date(t0.getTime() + 23 * HOUR)],
    ] as const) {
      await keys.insertOne({ _id: id, createdAt: at });
      await answers.insertOne({ _id: id, response: "", createdAt: at });
    }
    const now = () => new Date(t0.getTime() + 24 * HOUR + 60_000);
    expect(await sweepIdempotencyRecords(store, { now })).toBe(2);
    expect((await keys.find({})).map((d) => d._id)).toEqual(["young"]);
    expect((await answers.find({})).map((d) => d._id)).toEqual(["young"]);
  });
});

describe("owner leases on MongoDB (FerretDB)", () => {
  it("are written and renewed by upsert, read back as live, and expire on the clock", async () => {
    let now = new Date("2026-01-01T00:00:00Z");
    const a = createOwnerLeases({ store, now: () => now });
    const b = createOwnerLeases({ store, now: () => now });
    const release = await a.hold();
    expect(await b.isLive(a.owner)).toBe(true);
    // A renewal of the same document (the upsert a second time) keeps one lease.
    now = new Date(now.getTime() + 4_000);
    release();
    (await a.hold())();
    expect(await store.collection("idempotency_owners").countDocuments({ _id: a.owner })).toBe(1);
    now = new Date(now.getTime() + OWNER_LEASE_MS + OWNER_LEASE_GRACE_MS + 1);
    expect(await b.isLive(a.owner)).toBe(false);
    expect(await b.isLive("never-seen")).toBe(false);
  });
});
