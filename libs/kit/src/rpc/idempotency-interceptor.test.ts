import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { ExecutionService } from "@kiln/proto/execution";
import { afterAll, describe, expect, it } from "vitest";
import { createInternalTokens } from "../auth/internal-token.js";
import type { Principal } from "../auth/principal.js";
import { createLogger } from "../logger.js";
import { createMemoryStore } from "../store/memory-store.js";
import { createSqliteStore } from "../store/sqlite-store.js";
import { aroundCollection, type Store, StoreUnavailableError } from "../store/store.js";
import { createForwardInterceptor } from "./auth-interceptor.js";
import {
  ensureIdempotencyIndexes,
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  sweepIdempotencyRecords,
} from "./idempotency-interceptor.js";
import { OWNER_LEASE_GRACE_MS, OWNER_LEASE_MS } from "./idempotency-leases.js";
import { defineService } from "./rpc-server.js";
import { createInProcessTransport } from "./transport.js";

const tokens = createInternalTokens("x".repeat(32));
const METHOD = "/kiln.execution.v1.ExecutionService/ListModels";

/** A service whose ListModels stands in for a creating RPC: every real call makes a new "model". */
function setup(
  options: {
    now?: () => Date;
    gate?: Promise<void>;
    store?: Store;
    /** While it answers true, the call itself fails. */
    failing?: () => boolean;
    soleProcess?: boolean;
    secretFields?: Record<string, string[]>;
  } = {},
) {
  const store = options.store ?? createMemoryStore();
  let calls = 0;
  const service = defineService({
    name: "test",
    logger: createLogger({ name: "test", level: "silent" }),
    register: (router) =>
      router.service(ExecutionService, {
        async listModels() {
          calls++;
          const n = calls;
          await options.gate;
          if (options.failing?.()) throw new Error("the call failed");
          return { models: [{ id: `model-${n}` }] };
        },
      }),
    readiness: [],
    auth: { tokens, verifyApiKey: async () => Promise.reject(new Error("no keys")) },
    idempotency: {
      store,
      methods: new Set([METHOD]),
      now: options.now,
      soleProcess: options.soleProcess,
      secretFields: options.secretFields,
    },
  });
  const clientFor = (principal: Principal) =>
    createClient(ExecutionService, createInProcessTransport(service, [createForwardInterceptor(tokens, principal)]));
  return { clientFor, calls: () => calls, store };
}

/** A memory store that refuses every call while `down` is set, as a stopped server does. */
function flakyStore() {
  const inner = createMemoryStore();
  const state = { down: false };
  const store: Store = {
    ...inner,
    collection: (name) =>
      aroundCollection(inner.collection(name), (_method, run) =>
        state.down ? Promise.reject(new StoreUnavailableError("stopped")) : run(),
      ),
  };
  return { store, state };
}

const alice: Principal = { type: "user", id: "usr_a" };
const bob: Principal = { type: "user", id: "usr_b" };

async function call(client: ReturnType<ReturnType<typeof setup>["clientFor"]>, key?: string) {
  let replayed: string | null = null;
  const res = await client.listModels(
    {},
    {
      headers: key ? { [IDEMPOTENCY_KEY_HEADER]: key } : {},
      onHeader: (h) => (replayed = h.get(IDEMPOTENT_REPLAYED_HEADER)),
    },
  );
  return { id: res.models[0]?.id, replayed };
}

describe("idempotency interceptor", () => {
  it("replays the first response for a retry with the same key", async () => {
    const s = setup();
    const client = s.clientFor(alice);
    const first = await call(client, "k1");
    const retry = await call(client, "k1");
    expect(first).toEqual({ id: "model-1", replayed: null });
    expect(retry).toEqual({ id: "model-1", replayed: "true" });
    expect(s.calls()).toBe(1);
  });

  it("runs every call without a key, and scopes keys to the principal", async () => {
    const s = setup();
    await call(s.clientFor(alice));
    await call(s.clientFor(alice));
    const a = await call(s.clientFor(alice), "shared");
    const b = await call(s.clientFor(bob), "shared");
    expect(a.id).not.toBe(b.id);
    expect(s.calls()).toBe(4);
  });

  it("answers 409 (failed_precondition) while the first call is in flight", async () => {
    let open: () => void = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const s = setup({ gate });
    const client = s.clientFor(alice);
    const first = call(client, "slow");
    await new Promise((r) => setTimeout(r, 20));
    const err = await call(client, "slow").catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.FailedPrecondition);
    open();
    expect((await first).id).toBe("model-1");
  });

  it("forgets a key after its time to live", async () => {
    let now = new Date("2026-01-01T00:00:00Z");
    const s = setup({ now: () => now });
    const client = s.clientFor(alice);
    await call(client, "k");
    now = new Date(now.getTime() + 25 * 3_600_000);
    const later = await call(client, "k");
    expect(later).toEqual({ id: "model-2", replayed: null });
  });

  it("refuses a malformed key", async () => {
    const s = setup();
    const err = await call(s.clientFor(alice), "bad key with spaces").catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    expect(s.calls()).toBe(0);
  });

  it("abandons a key an earlier process left in flight at once when it alone serves the store", async () => {
    // An earlier start claimed the key and died before answering: its record stays in flight.
    const store = createMemoryStore();
    const earlier = setup({ store, gate: new Promise(() => {}) });
    void call(earlier.clientFor(alice), "k").catch(() => undefined);
    await new Promise((r) => setTimeout(r, 20));
    // Another replica sharing the store waits for it (409); the sole process runs the call again.
    const replica = setup({ store });
    const refused = await call(replica.clientFor(alice), "k").catch((e: unknown) => ConnectError.from(e));
    expect(refused).toMatchObject({ code: Code.FailedPrecondition });
    const sole = setup({ store, soleProcess: true });
    expect(await call(sole.clientFor(alice), "k")).toEqual({ id: "model-1", replayed: null });
    expect(await call(sole.clientFor(alice), "k")).toEqual({ id: "model-1", replayed: "true" });
  });
});

describe("a key claimed by a process that died", () => {
  it("is taken over by a retry within the owner's lease (seconds), not after five minutes", async () => {
    const store = createMemoryStore();
    // The dead process's clock stands still: it renewed its lease for the last time at t0.
    const t0 = new Date("2026-01-01T00:00:00Z");
    const dead = setup({ store, now: () => t0, gate: new Promise(() => {}) });
    void call(dead.clientFor(alice), "k").catch(() => undefined);
    await new Promise((r) => setTimeout(r, 20));
    let now = new Date(t0.getTime() + 1_000);
    const replica = setup({ store, now: () => now });
    // While the lease runs, the owner may still answer: 409.
    const refused = await call(replica.clientFor(alice), "k").catch((e: unknown) => ConnectError.from(e));
    expect(refused).toMatchObject({ code: Code.FailedPrecondition });
    // Past the lease (10 s, far below the five minutes of before) the retry runs the call.
    now = new Date(t0.getTime() + OWNER_LEASE_MS + OWNER_LEASE_GRACE_MS + 1_000);
    expect(await call(replica.clientFor(alice), "k")).toEqual({ id: "model-1", replayed: null });
    expect(await call(replica.clientFor(alice), "k")).toEqual({ id: "model-1", replayed: "true" });
  });

  it("is taken over by one of several concurrent retries; the others answer 409, never an internal error", async () => {
    const store = createMemoryStore();
    const t0 = new Date("2026-01-01T00:00:00Z");
    const dead = setup({ store, now: () => t0, gate: new Promise(() => {}) });
    void call(dead.clientFor(alice), "k").catch(() => undefined);
    await new Promise((r) => setTimeout(r, 20));
    let open: () => void = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const later = () => new Date(t0.getTime() + OWNER_LEASE_MS + OWNER_LEASE_GRACE_MS + 1_000);
    const replicas = Array.from({ length: 6 }, () => setup({ store, now: later, gate }));
    const pending = replicas.map((r) => call(r.clientFor(alice), "k").catch((e: unknown) => ConnectError.from(e)));
    await new Promise((r) => setTimeout(r, 50));
    open();
    const answers = await Promise.all(pending);
    const ran = answers.filter((a) => !(a instanceof ConnectError));
    expect(ran).toHaveLength(1);
    for (const a of answers.filter((x) => x instanceof ConnectError)) {
      expect(a).toMatchObject({ code: Code.FailedPrecondition });
    }
  });
});

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The embedded mode's store: SQLite in a file. */
function sqliteStore(): Store {
  const dir = mkdtempSync(join(tmpdir(), "kiln-idem-"));
  dirs.push(dir);
  return createSqliteStore({ path: join(dir, "store.db") });
}

const HOUR = 3_600_000;

describe.each([
  ["the in-memory store", createMemoryStore],
  ["the embedded (SQLite) store", sqliteStore],
])("idempotency records in %s", (_name, makeStore) => {
  it("expire after 24 h: an older record is not replayed and the sweep deletes it; a younger one is replayed and kept", async () => {
    const store = makeStore();
    await ensureIdempotencyIndexes(store);
    let now = new Date("2026-01-01T00:00:00Z");
    const clock = () => now;
    const s = setup({ store, now: clock });
    const client = s.clientFor(alice);
    expect(await call(client, "old")).toEqual({ id: "model-1", replayed: null });
    now = new Date(now.getTime() + 23 * HOUR);
    expect(await call(client, "young")).toEqual({ id: "model-2", replayed: null });
    now = new Date(now.getTime() + 1 * HOUR + 60_000);
    const stored = async () =>
      (await store.collection("idempotency_keys").countDocuments({})) +
      (await store.collection("idempotency_responses").countDocuments({}));
    expect(await stored()).toBe(4);
    // 24 h 1 min after "old" (a claim and its answer), 1 h 1 min after "young".
    expect(await sweepIdempotencyRecords(store, { now: clock })).toBe(2);
    expect(await stored()).toBe(2);
    expect(await sweepIdempotencyRecords(store, { now: clock })).toBe(0);
    expect(await call(client, "young")).toEqual({ id: "model-2", replayed: "true" });
    // The expired key runs the request again, and is remembered afresh.
    expect(await call(client, "old")).toEqual({ id: "model-3", replayed: null });
    expect(await call(client, "old")).toEqual({ id: "model-3", replayed: "true" });
    expect(s.calls()).toBe(3);
    await store.close();
  });

  it("never store nor replay a response field named secret for its method", async () => {
    const store = makeStore();
    const s = setup({ store, secretFields: { [METHOD]: ["models"] } });
    const client = s.clientFor(alice);
    // The first answer carries it, once.
    expect(await call(client, "k")).toEqual({ id: "model-1", replayed: null });
    const answers = await store.collection<{ _id: string; response: string }>("idempotency_responses").find({});
    expect(answers).toHaveLength(1);
    expect(Buffer.from(answers[0]?.response ?? "", "base64").toString("latin1")).not.toContain("model-1");
    // The replay answers everything else (here: nothing) and no longer the field.
    expect(await call(client, "k")).toEqual({ id: undefined, replayed: "true" });
    expect(s.calls()).toBe(1);
    await store.close();
  });
});

describe("idempotency secret fields", () => {
  it("clear the field from an answer stored before the rule, when it is replayed", async () => {
    const store = createMemoryStore();
    await call(setup({ store }).clientFor(alice), "k");
    const redacting = setup({ store, secretFields: { [METHOD]: ["models"] } });
    expect(await call(redacting.clientFor(alice), "k")).toEqual({ id: undefined, replayed: "true" });
  });

  it("refuse a field the response does not have, rather than store the secret", async () => {
    const s = setup({ secretFields: { [METHOD]: ["secret"] } });
    const err = await call(s.clientFor(alice), "k").catch((e: unknown) => ConnectError.from(e));
    expect(err).toMatchObject({ code: Code.Internal });
  });

  it("releases a failed call's key once the store is back when it refused the release, so a retry runs", async () => {
    const { store, state } = flakyStore();
    let failing = true;
    let open: () => void = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const s = setup({ store, gate, failing: () => failing });
    const client = s.clientFor(alice);
    const first = call(client, "k").catch((e: unknown) => ConnectError.from(e));
    await new Promise((r) => setTimeout(r, 20));
    // The store stops while the call runs; the call fails, and so does the release of its key.
    state.down = true;
    open();
    expect((await first) as ConnectError).toBeInstanceOf(ConnectError);
    state.down = false;
    failing = false;
    await new Promise((r) => setTimeout(r, 700));
    expect(await call(client, "k")).toEqual({ id: "model-2", replayed: null });
  });

  it("answers a call that ran even when the store refused to keep its answer, and keeps it once the store is back", async () => {
    const { store, state } = flakyStore();
    let open: () => void = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const s = setup({ store, gate });
    const client = s.clientFor(alice);
    const first = call(client, "k");
    await new Promise((r) => setTimeout(r, 20));
    state.down = true;
    open();
    expect(await first).toEqual({ id: "model-1", replayed: null });
    state.down = false;
    // Until the answer is kept, a retry is still in flight (409), never run twice.
    await new Promise((r) => setTimeout(r, 700));
    expect(await call(client, "k")).toEqual({ id: "model-1", replayed: "true" });
    expect(s.calls()).toBe(1);
  });
});
