/**
 * The behaviour every Bus backend must show, run against the in-process bus (unit) and a real
 * nats-server (integration). Timing tests use ackWait of a few hundred ms; each test makes its own
 * streams, named uniquely, and `cleanup` removes them with the bus.
 */

import type { Bus, BusMessage, Retention, StreamSpec } from "@kiln/kit/bus";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

export type MakeBus = () => Promise<{ bus: Bus; cleanup: () => Promise<void> }>;

const POLL = { timeout: 3_000, interval: 20 };
let streamCounter = 0;

function uniqueStreamName(): string {
  return `T${Date.now()}_${++streamCounter}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export function describeBusContract(name: string, makeBus: MakeBus): void {
  describe(name, () => {
    let bus: Bus;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ bus, cleanup } = await makeBus());
    });

    afterEach(async () => {
      await cleanup();
    });

    /** A fresh stream that owns `<name>.>`. */
    async function createStream(retention: Retention = "limits", extra: Partial<StreamSpec> = {}): Promise<string> {
      const stream = uniqueStreamName();
      await bus.ensureStream({ name: stream, subjects: [`${stream}.>`], retention, ...extra });
      return stream;
    }

    const storedCount = async (stream: string) => (await bus.streamInfo(stream)).messages;

    it("reports the last sequence stored, which stays when messages expire", async () => {
      const stream = await createStream("limits", { maxAgeMs: 300 });
      expect((await bus.streamInfo(stream)).lastSeq).toBe(0);
      await bus.publish(`${stream}.a`, "1");
      const ack = await bus.publish(`${stream}.b`, "2");
      expect(await bus.streamInfo(stream)).toEqual({ name: stream, messages: 2, lastSeq: ack.seq });
      await expect.poll(() => storedCount(stream), POLL).toBe(0);
      expect((await bus.streamInfo(stream)).lastSeq).toBe(ack.seq);
    });

    it("delivers what was published, with headers, json() and string()", async () => {
      const stream = await createStream();
      const ack = await bus.publish(`${stream}.order.created`, JSON.stringify({ id: 7, name: "Zoë" }), {
        headers: { "x-tenant": "t1" },
      });
      expect(ack).toEqual({ stream, seq: 1, duplicate: false });
      await bus.publish(`${stream}.raw`, new Uint8Array([1, 2, 3]));

      const got: BusMessage[] = [];
      bus.consume({ stream, durable: "reader" }, async (m) => {
        got.push(m);
      });
      await expect.poll(() => got.length, POLL).toBe(2);
      const [first, second] = got;
      expect(first?.subject).toBe(`${stream}.order.created`);
      expect(first?.json()).toEqual({ id: 7, name: "Zoë" });
      expect(first?.string()).toBe('{"id":7,"name":"Zoë"}');
      expect(first?.headers).toEqual({ "x-tenant": "t1" });
      expect(first?.seq).toBe(ack.seq);
      expect(first?.deliveryCount).toBe(1);
      expect(first?.redelivered).toBe(false);
      expect([...(second?.data ?? [])]).toEqual([1, 2, 3]);
      expect(second?.headers).toEqual({});
      expect(second?.seq).toBe(2);
    });

    it("routes by subject with * and >, and rejects a subject no stream owns", async () => {
      const stream = uniqueStreamName();
      await bus.ensureStream({ name: stream, subjects: [`${stream}.a.*`, `${stream}.b.>`], retention: "limits" });
      await expect(bus.publish(`${stream}.a.x`, "1")).resolves.toMatchObject({ stream });
      await expect(bus.publish(`${stream}.b.x.y`, "2")).resolves.toMatchObject({ stream });
      await expect(bus.publish(`${stream}.a.x.y`, "3")).rejects.toThrow(/no stream owns/);
      await expect(bus.publish(`${stream}.b`, "4")).rejects.toThrow(/no stream owns/);
      await expect(bus.publish(`${uniqueStreamName()}.nowhere`, "5")).rejects.toThrow(/no stream owns/);
      expect(await storedCount(stream)).toBe(2);
    });

    it("refuses a stream whose subjects overlap another stream's", async () => {
      const stream = await createStream();
      await expect(
        bus.ensureStream({ name: uniqueStreamName(), subjects: [`${stream}.x`], retention: "limits" }),
      ).rejects.toThrow(/overlap/);
    });

    it("de-duplicates by msgId within the duplicate window", async () => {
      const stream = await createStream("limits", { duplicateWindowMs: 300 });
      const first = await bus.publish(`${stream}.e`, "x", { msgId: "m1" });
      const again = await bus.publish(`${stream}.e`, "x", { msgId: "m1" });
      const other = await bus.publish(`${stream}.e`, "y", { msgId: "m2" });
      expect(first.duplicate).toBe(false);
      expect(again).toEqual({ stream, seq: first.seq, duplicate: true });
      expect(other).toEqual({ stream, seq: first.seq + 1, duplicate: false });
      expect(await storedCount(stream)).toBe(2);

      // past the window the same id is a new message again (the server purges ids lazily)
      await sleep(800);
      const later = await bus.publish(`${stream}.e`, "x", { msgId: "m1" });
      expect(later).toEqual({ stream, seq: first.seq + 2, duplicate: false });
    });

    it("ensureStream and ensureConsumer are idempotent, and a durable remembers its position", async () => {
      const stream = uniqueStreamName();
      const spec: StreamSpec = { name: stream, subjects: [`${stream}.a`], retention: "limits" };
      await bus.ensureStream(spec);
      await bus.ensureStream(spec);
      await bus.ensureStream({ ...spec, subjects: [`${stream}.a`, `${stream}.b`] });
      await expect(bus.ensureStream({ ...spec, retention: "workqueue" })).rejects.toThrow(/retention/);
      await bus.publish(`${stream}.b`, "1");

      const consumer = { stream, durable: "d", ackWaitMs: 1_000 };
      await bus.ensureConsumer(consumer);
      await bus.ensureConsumer(consumer);
      await bus.publish(`${stream}.a`, "2");
      const got: string[] = [];
      const handler = async (m: BusMessage) => {
        got.push(m.string());
      };
      const first = bus.consume(consumer, handler);
      await expect.poll(() => got, POLL).toEqual(["1", "2"]);
      await first.stop();

      // a second subscription on the durable resumes after what the first one acknowledged
      await bus.ensureConsumer(consumer);
      await bus.publish(`${stream}.a`, "3");
      bus.consume(consumer, handler);
      await expect.poll(() => got, POLL).toEqual(["1", "2", "3"]);
      await sleep(100);
      expect(got).toEqual(["1", "2", "3"]);
      // limits retention keeps acknowledged messages
      expect(await storedCount(stream)).toBe(3);
    });

    it("gives every durable on an interest stream each message once, and drops it when all acked", async () => {
      const stream = await createStream("interest");
      // with no consumer yet, nobody is interested: JetStream does not keep it
      await bus.publish(`${stream}.e`, "unwanted");
      expect(await storedCount(stream)).toBe(0);

      await bus.ensureConsumer({ stream, durable: "a" });
      await bus.ensureConsumer({ stream, durable: "b" });
      for (const body of ["0", "1", "2"]) await bus.publish(`${stream}.e`, body);
      expect(await storedCount(stream)).toBe(3);

      const seenByA: string[] = [];
      const subA = bus.consume({ stream, durable: "a" }, async (m) => {
        seenByA.push(m.string());
      });
      await expect.poll(() => seenByA.length, POLL).toBe(3);
      await subA.stop();
      // b has not acknowledged them yet
      expect(await storedCount(stream)).toBe(3);

      const seenByB: string[] = [];
      bus.consume({ stream, durable: "b" }, async (m) => {
        seenByB.push(m.string());
      });
      await expect.poll(() => seenByB.length, POLL).toBe(3);
      await expect.poll(() => storedCount(stream), POLL).toBe(0);
      expect(seenByA).toEqual(["0", "1", "2"]);
      expect(seenByB).toEqual(["0", "1", "2"]);
    });

    it("shares one durable between two subscriptions, each message handled once", async () => {
      const stream = await createStream();
      const total = 20;
      for (let i = 0; i < total; i++) await bus.publish(`${stream}.job`, String(i));
      const handledBy = new Map<number, string[]>();
      const handler = (label: string) => async (m: BusMessage) => {
        handledBy.set(m.seq, [...(handledBy.get(m.seq) ?? []), label]);
        await sleep(20);
      };
      bus.consume({ stream, durable: "shared" }, handler("a"));
      bus.consume({ stream, durable: "shared" }, handler("b"));
      await expect.poll(() => handledBy.size, { ...POLL, timeout: 5_000 }).toBe(total);
      // give a wrongly repeated delivery time to show up
      await sleep(100);
      const labels = [...handledBy.values()];
      expect(labels.every((l) => l.length === 1)).toBe(true);
      expect(new Set(labels.flat())).toEqual(new Set(["a", "b"]));
    });

    it("removes acknowledged messages from a workqueue stream and refuses an overlapping consumer", async () => {
      const stream = await createStream("workqueue");
      await bus.ensureConsumer({ stream, durable: "jobs", filterSubject: `${stream}.jobs.*` });
      await expect(
        bus.ensureConsumer({ stream, durable: "rival", filterSubject: `${stream}.jobs.urgent` }),
      ).rejects.toThrow(/not unique/);
      await expect(bus.ensureConsumer({ stream, durable: "everything" })).rejects.toThrow();
      await bus.ensureConsumer({ stream, durable: "mail", filterSubject: `${stream}.mail` });

      for (const job of ["x", "y", "z"]) await bus.publish(`${stream}.jobs.${job}`, job);
      expect(await storedCount(stream)).toBe(3);
      const done: string[] = [];
      bus.consume({ stream, durable: "jobs", filterSubject: `${stream}.jobs.*` }, async (m) => {
        done.push(m.string());
      });
      await expect.poll(() => done.length, POLL).toBe(3);
      await expect.poll(() => storedCount(stream), POLL).toBe(0);
    });

    it("redelivers after a handler throws, counting deliveries", async () => {
      const stream = await createStream();
      await bus.publish(`${stream}.e`, "x");
      const deliveries: Array<{ count: number; redelivered: boolean }> = [];
      const errors: string[] = [];
      bus.consume(
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
      const stream = await createStream();
      await bus.publish(`${stream}.e`, "x");
      const times: number[] = [];
      bus.consume({ stream, durable: "d", ackWaitMs: 5_000 }, async (m) => {
        times.push(Date.now());
        if (m.deliveryCount === 1) m.nak(400);
      });
      await expect.poll(() => times.length, POLL).toBe(2);
      expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(350);
    });

    it("redelivers when ackWait passes without an ack", async () => {
      const stream = await createStream();
      await bus.publish(`${stream}.e`, "x");
      const times: number[] = [];
      const redelivered = deferred();
      // the first handler holds its slot without settling; concurrency 2 leaves room for the redelivery
      bus.consume(
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
      const stream = await createStream();
      await bus.publish(`${stream}.e`, "poison");
      const counts: number[] = [];
      bus.consume(
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
      const stream = await createStream("workqueue");
      await bus.publish(`${stream}.e`, "poison");
      await bus.publish(`${stream}.e`, "flaky");
      const seen: string[] = [];
      bus.consume(
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
      await expect.poll(() => storedCount(stream), POLL).toBe(0);
    });

    it("working() keeps a slow handler's message from being redelivered", async () => {
      const stream = await createStream();
      await bus.publish(`${stream}.e`, "slow");
      const counts: number[] = [];
      let finished = false;
      // concurrency 2 leaves a free slot, so a redelivery would be visible
      bus.consume(
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
      const stream = await createStream("workqueue");
      await bus.publish(`${stream}.e`, "first");
      const started = deferred();
      let finished = 0;
      const sub = bus.consume({ stream, durable: "d" }, async () => {
        started.resolve();
        await sleep(300);
        finished++;
      });
      await started.promise;
      await sub.stop();
      expect(finished).toBe(1);
      // the handler's ack went through before stop() returned
      expect(await storedCount(stream)).toBe(0);

      await bus.publish(`${stream}.e`, "second");
      await sleep(300);
      expect(finished).toBe(1);
      expect(await storedCount(stream)).toBe(1);
    });

    it("close() waits for handlers in flight, and ping() fails afterwards", async () => {
      const stream = await createStream();
      await bus.publish(`${stream}.e`, "x");
      await bus.ping();
      const started = deferred();
      let finished = false;
      bus.consume({ stream, durable: "d" }, async () => {
        started.resolve();
        await sleep(200);
        finished = true;
      });
      await started.promise;
      await bus.close();
      expect(finished).toBe(true);
      await expect(bus.ping()).rejects.toThrow();
    });

    it("runs up to `concurrency` handlers at once", async () => {
      const stream = await createStream();
      for (let i = 0; i < 6; i++) await bus.publish(`${stream}.e`, String(i));
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
      bus.consume({ stream, durable: "parallel" }, parallel.handler, { concurrency: 3 });
      bus.consume({ stream, durable: "serial" }, serial.handler);
      await expect.poll(() => parallel.state.done + serial.state.done, POLL).toBe(12);
      expect(parallel.state.max).toBe(3);
      expect(serial.state.max).toBe(1);
    });

    it("holds back new messages while maxAckPending are unacknowledged", async () => {
      const stream = await createStream();
      for (let i = 0; i < 5; i++) await bus.publish(`${stream}.e`, String(i));
      const gate = deferred();
      const state = { active: 0, max: 0, done: 0 };
      bus.consume(
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
      const stream = await createStream("limits", { maxAgeMs: 400 });
      await bus.publish(`${stream}.e`, "1");
      await bus.publish(`${stream}.e`, "2");
      expect(await storedCount(stream)).toBe(2);
      await expect.poll(() => storedCount(stream), POLL).toBe(0);
    });
  });
}
