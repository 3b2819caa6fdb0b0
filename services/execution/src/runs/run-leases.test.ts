import { createMemoryBus } from "@kiln/kit/bus/memory";
import { createLogger } from "@kiln/kit/logger";
import { aroundCollection, StoreUnavailableError } from "@kiln/kit/store";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { describe, expect, it } from "vitest";
import { promptRunFixture } from "../../test/prompt-run-fixture.js";
import { until } from "../../test/until.js";
import { createRunEventOutbox, RUNS_STREAM, runEventIntentCollection } from "../events/run-events.js";
import { type RunDoc, runCollection } from "../store/run-store.js";
import { createRunLeases, EXPIRY_GRACE_MS, ORPHANED_RUN_ERROR } from "./run-leases.js";

const logger = createLogger({ name: "test", level: "silent" });

/** A replica's outbox relay over a store holding asynchronous runs, and the run.completed events it publishes. */
async function replica(now: () => Date = () => new Date()) {
  const store = createMemoryStore();
  const bus = createMemoryBus();
  await bus.ensureStream(RUNS_STREAM);
  const seen: { runId: string; status: string }[] = [];
  const sub = bus.consume(
    { stream: RUNS_STREAM.name, durable: "audit", filterSubject: "runs.completed.>" },
    async (m) => void seen.push(m.json<{ runId: string; status: string }>()),
  );
  const runs = runCollection(store);
  const intents = runEventIntentCollection(store);
  const outbox = createRunEventOutbox(runs, intents, bus, logger, { relayAfterMs: 0, now });
  /** A running asynchronous run, as the agent runner stores it (intent first), leased until `leaseUntil`. */
  const running = async (id: string, leaseUntil: Date): Promise<RunDoc> => {
    const doc: RunDoc = { ...promptRunFixture(id, "org_a"), kind: "agent", status: "running", leaseUntil };
    await outbox.intend(id);
    await runs.insertOne(doc);
    return doc;
  };
  return {
    runs,
    outbox,
    seen,
    running,
    close: async () => {
      await sub.stop();
      await outbox.stop();
      await bus.close();
    },
  };
}

const id = (n: number) => `arun_${String(n).padStart(32, "0")}`;

describe("asynchronous run leases", () => {
  it("fails a running run whose lease ran out (its process died) and publishes its run.completed", async () => {
    const r = await replica();
    await r.running(id(1), new Date(Date.now() - EXPIRY_GRACE_MS - 1_000));
    await r.outbox.relayPending();
    const stored = await r.runs.findOne({ _id: id(1) });
    expect(stored?.status).toBe("failed");
    expect(stored?.error).toEqual(ORPHANED_RUN_ERROR);
    expect(stored?.leaseUntil).toBeUndefined();
    await until(async () => r.seen.length === 1);
    expect(r.seen).toEqual([expect.objectContaining({ runId: id(1), status: "failed" })]);
    await r.close();
  });

  it("leaves a run alone while its lease holds, and once it completes publishes it as it ended", async () => {
    const r = await replica();
    const doc = await r.running(id(2), new Date(Date.now() + 60_000));
    await r.outbox.relayPending();
    expect((await r.runs.findOne({ _id: id(2) }))?.status).toBe("running");
    expect(r.seen).toEqual([]);
    const { leaseUntil: _, ...done } = { ...doc, status: "succeeded" as const };
    await r.runs.replaceOne({ _id: id(2), status: "running" }, done);
    await r.outbox.relayPending();
    await until(async () => r.seen.length === 1);
    expect(r.seen).toEqual([expect.objectContaining({ runId: id(2), status: "succeeded" })]);
    await r.close();
  });

  it("is renewed by the process running it, so a live run is never failed", async () => {
    // The leases' and the relay's clock is the test's: only the renewal timer runs in real time.
    let clock = Date.parse("2026-12-01T00:00:00Z");
    const now = () => new Date(clock);
    const r = await replica(now);
    const leases = createRunLeases(r.runs, { leaseMs: 1_000, renewMs: 20, now });
    await r.running(id(3), leases.initial());
    leases.hold(id(3));
    clock += 5_000; // well past the first lease
    await until(async () => ((await r.runs.findOne({ _id: id(3) }))?.leaseUntil?.getTime() ?? 0) > clock);
    await r.outbox.relayPending();
    expect((await r.runs.findOne({ _id: id(3) }))?.status).toBe("running");
    // Released (as when its process stops renewing): failed once the lease is out.
    leases.release(id(3));
    clock += 5_000 + EXPIRY_GRACE_MS;
    await r.outbox.relayPending();
    expect((await r.runs.findOne({ _id: id(3) }))?.status).toBe("failed");
    leases.stop();
    await r.close();
  });

  it("leaves a run whose renewals a store outage refused to its process, which renews within moments of the store's return", async () => {
    let clock = Date.parse("2026-12-01T00:00:00Z");
    const now = () => new Date(clock);
    const r = await replica(now);
    let down = false;
    const flaky = aroundCollection(r.runs, (_method, run) =>
      down ? Promise.reject(new StoreUnavailableError("stopped")) : run(),
    );
    const leases = createRunLeases(flaky, { leaseMs: 1_000, renewMs: 20, now });
    await r.running(id(4), leases.initial());
    leases.hold(id(4));
    down = true;
    clock += 1_500; // past the lease while every renewal is refused
    await new Promise((resolve) => setTimeout(resolve, 100));
    down = false;
    // Another replica's relay reads the store as soon as it is back: the grace keeps the run.
    await r.outbox.relayPending();
    expect((await r.runs.findOne({ _id: id(4) }))?.status).toBe("running");
    // The refused renewal is tried again (every 0.5 s), and the lease moves on.
    await until(async () => ((await r.runs.findOne({ _id: id(4) }))?.leaseUntil?.getTime() ?? 0) > clock, 3_000);
    leases.stop();
    await r.close();
  });
});
