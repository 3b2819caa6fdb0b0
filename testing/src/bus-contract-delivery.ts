import { expect, it } from "vitest";
import { type BusUnderTest, deferred, POLL, sleep } from "./bus-contract-fixtures.js";

export function describeBusDelivery(t: BusUnderTest): void {
  it("redelivers after a handler throws, counting deliveries", async () => {
    const stream = await t.createStream();
    await t.bus.publish(`${stream}.e`, "x");
    const deliveries: Array<{ count: number; redelivered: boolean }> = [];
    const errors: string[] = [];
    t.bus.consume(
      { stream, durable: "d" },
      async (m) => {
        deliveries.push({ count: m.deliveryCount, redelivered: m.redelivered });
        if (m.deliveryCount === 1) throw new Error("boom");
      },
      { retryDelayMs: 50, onError: (error, m) => errors.push(`${(error as Error).message}@${m.seq}`) },
    );
    await expect.poll(() => deliveries.length, POLL).toBe(2);
    expect(deliveries).toEqual([
      { count: 1, redelivered: false },
      { count: 2, redelivered: true },
    ]);
    expect(errors).toEqual(["boom@1"]);
  });

  it("redelivers a nak'ed message after the given delay", async () => {
    const stream = await t.createStream();
    await t.bus.publish(`${stream}.e`, "x");
    const times: number[] = [];
    t.bus.consume({ stream, durable: "d", ackWaitMs: 5_000 }, async (m) => {
      times.push(Date.now());
      if (m.deliveryCount === 1) m.nak(400);
    });
    await expect.poll(() => times.length, POLL).toBe(2);
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(350);
  });

  it("redelivers when ackWait passes without an ack", async () => {
    const stream = await t.createStream();
    await t.bus.publish(`${stream}.e`, "x");
    const times: number[] = [];
    const redelivered = deferred();
    // the first handler holds its slot without settling; concurrency 2 leaves room for the redelivery
    t.bus.consume(
      { stream, durable: "d", ackWaitMs: 300 },
      async (m) => {
        times.push(Date.now());
        if (m.deliveryCount === 1) await Promise.race([redelivered.promise, sleep(POLL.timeout)]);
        else if (m.redelivered) redelivered.resolve();
      },
      { concurrency: 2 },
    );
    await expect.poll(() => times.length, POLL).toBe(2);
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(250);
  });

  it("stops redelivering after maxDeliver deliveries", async () => {
    const stream = await t.createStream();
    await t.bus.publish(`${stream}.e`, "poison");
    const counts: number[] = [];
    t.bus.consume(
      { stream, durable: "d", ackWaitMs: 300, maxDeliver: 2 },
      async (m) => {
        counts.push(m.deliveryCount);
        throw new Error("always fails");
      },
      { retryDelayMs: 50 },
    );
    await expect.poll(() => counts, POLL).toEqual([1, 2]);
    // longer than ackWait plus the retry delay: a third delivery would have arrived
    await sleep(700);
    expect(counts).toEqual([1, 2]);
  });

  it("never redelivers a terminated message", async () => {
    const stream = await t.createStream("workqueue");
    await t.bus.publish(`${stream}.e`, "poison");
    await t.bus.publish(`${stream}.e`, "flaky");
    const seen: string[] = [];
    t.bus.consume(
      { stream, durable: "d", ackWaitMs: 300 },
      async (m) => {
        seen.push(`${m.string()}#${m.deliveryCount}`);
        if (m.string() === "poison") m.term();
        else if (m.deliveryCount === 1) throw new Error("try again");
      },
      { retryDelayMs: 50 },
    );
    await expect.poll(() => seen, POLL).toEqual(["poison#1", "flaky#1", "flaky#2"]);
    await sleep(500);
    expect(seen).toEqual(["poison#1", "flaky#1", "flaky#2"]);
    // term counts as acknowledged on a workqueue stream
    await expect.poll(() => t.storedCount(stream), POLL).toBe(0);
  });

  it("working() keeps a slow handler's message from being redelivered", async () => {
    const stream = await t.createStream();
    await t.bus.publish(`${stream}.e`, "slow");
    const counts: number[] = [];
    let finished = false;
    // concurrency 2 leaves a free slot, so a redelivery would be visible
    t.bus.consume(
      { stream, durable: "d", ackWaitMs: 300 },
      async (m) => {
        counts.push(m.deliveryCount);
        for (let i = 0; i < 8; i++) {
          await sleep(100);
          m.working();
        }
        finished = true;
      },
      { concurrency: 2 },
    );
    await expect.poll(() => finished, POLL).toBe(true);
    await sleep(400);
    expect(counts).toEqual([1]);
  });

  it("stop() waits for the handler in flight and takes nothing more", async () => {
    const stream = await t.createStream("workqueue");
    await t.bus.publish(`${stream}.e`, "first");
    const started = deferred();
    let finished = 0;
    const sub = t.bus.consume({ stream, durable: "d" }, async () => {
      started.resolve();
      await sleep(300);
      finished++;
    });
    await started.promise;
    await sub.stop();
    expect(finished).toBe(1);
    // the handler's ack went through before stop() returned
    expect(await t.storedCount(stream)).toBe(0);

    await t.bus.publish(`${stream}.e`, "second");
    await sleep(300);
    expect(finished).toBe(1);
    expect(await t.storedCount(stream)).toBe(1);
  });

  it("close() waits for handlers in flight, and ping() fails afterwards", async () => {
    const stream = await t.createStream();
    await t.bus.publish(`${stream}.e`, "x");
    await t.bus.ping();
    const started = deferred();
    let finished = false;
    t.bus.consume({ stream, durable: "d" }, async () => {
      started.resolve();
      await sleep(200);
      finished = true;
    });
    await started.promise;
    await t.bus.close();
    expect(finished).toBe(true);
    await expect(t.bus.ping()).rejects.toThrow();
  });

  it("runs up to `concurrency` handlers at once", async () => {
    const stream = await t.createStream();
    for (let i = 0; i < 6; i++) await t.bus.publish(`${stream}.e`, String(i));
    const track = () => {
      const state = { active: 0, max: 0, done: 0 };
      const handler = async () => {
        state.active++;
        state.max = Math.max(state.max, state.active);
        await sleep(100);
        state.active--;
        state.done++;
      };
      return { state, handler };
    };
    const parallel = track();
    const serial = track();
    t.bus.consume({ stream, durable: "parallel" }, parallel.handler, { concurrency: 3 });
    t.bus.consume({ stream, durable: "serial" }, serial.handler);
    await expect.poll(() => parallel.state.done + serial.state.done, POLL).toBe(12);
    expect(parallel.state.max).toBe(3);
    expect(serial.state.max).toBe(1);
  });

  it("holds back new messages while maxAckPending are unacknowledged", async () => {
    const stream = await t.createStream();
    for (let i = 0; i < 5; i++) await t.bus.publish(`${stream}.e`, String(i));
    const gate = deferred();
    const state = { active: 0, max: 0, done: 0 };
    t.bus.consume(
      { stream, durable: "d", maxAckPending: 2 },
      async () => {
        state.active++;
        state.max = Math.max(state.max, state.active);
        await gate.promise;
        state.active--;
        state.done++;
      },
      { concurrency: 5 },
    );
    await expect.poll(() => state.active, POLL).toBe(2);
    // concurrency 5 would allow more; only maxAckPending holds them back
    await sleep(200);
    expect(state.active).toBe(2);
    gate.resolve();
    await expect.poll(() => state.done, POLL).toBe(5);
    expect(state.max).toBe(2);
  });

  it("drops messages older than maxAgeMs", async () => {
    const stream = await t.createStream("limits", { maxAgeMs: 400 });
    await t.bus.publish(`${stream}.e`, "1");
    await t.bus.publish(`${stream}.e`, "2");
    expect(await t.storedCount(stream)).toBe(2);
    await expect.poll(() => t.storedCount(stream), POLL).toBe(0);
  });
}
