/**
 * The bus contract's streams and consumers: sequences, delivery with headers, subject routing,
 * overlapping streams, de-duplication, idempotent set-up, interest, shared and workqueue consumers.
 */
import type { BusMessage, StreamSpec } from "@kiln/kit/bus";
import { expect, it } from "vitest";
import { type BusUnderTest, POLL, sleep, uniqueStreamName } from "./bus-contract-fixtures.js";

export function describeBusStreams(t: BusUnderTest): void {
  it("reports the last sequence stored, which stays when messages expire", async () => {
    const stream = await t.createStream("limits", { maxAgeMs: 300 });
    expect((await t.bus.streamInfo(stream)).lastSeq).toBe(0);
    await t.bus.publish(`${stream}.a`, "1");
    const ack = await t.bus.publish(`${stream}.b`, "2");
    expect(await t.bus.streamInfo(stream)).toEqual({ name: stream, messages: 2, lastSeq: ack.seq });
    await expect.poll(() => t.storedCount(stream), POLL).toBe(0);
    expect((await t.bus.streamInfo(stream)).lastSeq).toBe(ack.seq);
  });

  it("delivers what was published, with headers, json() and string()", async () => {
    const stream = await t.createStream();
    const ack = await t.bus.publish(`${stream}.order.created`, JSON.stringify({ id: 7, name: "Zoë" }), {
      headers: { "x-tenant": "t1" },
    });
    expect(ack).toEqual({ stream, seq: 1, duplicate: false });
    await t.bus.publish(`${stream}.raw`, new Uint8Array([1, 2, 3]));

    const got: BusMessage[] = [];
    t.bus.consume({ stream, durable: "reader" }, async (m) => {
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

  it("hands listeners what is published on their subjects from then on, until stopped", async () => {
    const stream = await t.createStream();
    await t.bus.publish(`${stream}.a.before`, "0");
    const heard: string[] = [];
    const listening = t.bus.listen(`${stream}.a.*`, (subject, data) => {
      heard.push(`${subject}=${new TextDecoder().decode(data)}`);
    });
    // A core subscription reaches the server with the next message the connection sends.
    await t.bus.ping();
    await t.bus.publish(`${stream}.a.x`, "1");
    await t.bus.publish(`${stream}.b.x`, "2");
    await t.bus.publish(`${stream}.a.y`, "3");
    await expect.poll(() => heard, POLL).toEqual([`${stream}.a.x=1`, `${stream}.a.y=3`]);
    await listening.stop();
    await t.bus.publish(`${stream}.a.z`, "4");
    await sleep(100);
    expect(heard).toHaveLength(2);
  });

  it("routes by subject with * and >, and rejects a subject no stream owns", async () => {
    const stream = uniqueStreamName();
    await t.bus.ensureStream({ name: stream, subjects: [`${stream}.a.*`, `${stream}.b.>`], retention: "limits" });
    await expect(t.bus.publish(`${stream}.a.x`, "1")).resolves.toMatchObject({ stream });
    await expect(t.bus.publish(`${stream}.b.x.y`, "2")).resolves.toMatchObject({ stream });
    await expect(t.bus.publish(`${stream}.a.x.y`, "3")).rejects.toThrow(/no stream owns/);
    await expect(t.bus.publish(`${stream}.b`, "4")).rejects.toThrow(/no stream owns/);
    await expect(t.bus.publish(`${uniqueStreamName()}.nowhere`, "5")).rejects.toThrow(/no stream owns/);
    expect(await t.storedCount(stream)).toBe(2);
  });

  it("refuses a stream whose subjects overlap another stream's", async () => {
    const stream = await t.createStream();
    await expect(
      t.bus.ensureStream({ name: uniqueStreamName(), subjects: [`${stream}.x`], retention: "limits" }),
    ).rejects.toThrow(/overlap/);
  });

  it("de-duplicates by msgId within the duplicate window", async () => {
    const stream = await t.createStream("limits", { duplicateWindowMs: 300 });
    const first = await t.bus.publish(`${stream}.e`, "x", { msgId: "m1" });
    const again = await t.bus.publish(`${stream}.e`, "x", { msgId: "m1" });
    const other = await t.bus.publish(`${stream}.e`, "y", { msgId: "m2" });
    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ stream, seq: first.seq, duplicate: true });
    expect(other).toEqual({ stream, seq: first.seq + 1, duplicate: false });
    expect(await t.storedCount(stream)).toBe(2);

    // past the window the same id is a new message again (the server purges ids lazily)
    await sleep(800);
    const later = await t.bus.publish(`${stream}.e`, "x", { msgId: "m1" });
    expect(later).toEqual({ stream, seq: first.seq + 2, duplicate: false });
  });

  it("ensureStream and ensureConsumer are idempotent, and a durable remembers its position", async () => {
    const stream = uniqueStreamName();
    const spec: StreamSpec = { name: stream, subjects: [`${stream}.a`], retention: "limits" };
    await t.bus.ensureStream(spec);
    await t.bus.ensureStream(spec);
    await t.bus.ensureStream({ ...spec, subjects: [`${stream}.a`, `${stream}.b`] });
    await expect(t.bus.ensureStream({ ...spec, retention: "workqueue" })).rejects.toThrow(/retention/);
    await t.bus.publish(`${stream}.b`, "1");

    const consumer = { stream, durable: "d", ackWaitMs: 1_000 };
    await t.bus.ensureConsumer(consumer);
    await t.bus.ensureConsumer(consumer);
    await t.bus.publish(`${stream}.a`, "2");
    const got: string[] = [];
    const handler = async (m: BusMessage) => {
      got.push(m.string());
    };
    const first = t.bus.consume(consumer, handler);
    await expect.poll(() => got, POLL).toEqual(["1", "2"]);
    await first.stop();

    // a second subscription on the durable resumes after what the first one acknowledged
    await t.bus.ensureConsumer(consumer);
    await t.bus.publish(`${stream}.a`, "3");
    t.bus.consume(consumer, handler);
    await expect.poll(() => got, POLL).toEqual(["1", "2", "3"]);
    await sleep(100);
    expect(got).toEqual(["1", "2", "3"]);
    // limits retention keeps acknowledged messages
    expect(await t.storedCount(stream)).toBe(3);
  });

  it("gives every durable on an interest stream each message once, and drops it when all acked", async () => {
    const stream = await t.createStream("interest");
    // with no consumer yet, nobody is interested: JetStream does not keep it
    await t.bus.publish(`${stream}.e`, "unwanted");
    expect(await t.storedCount(stream)).toBe(0);

    await t.bus.ensureConsumer({ stream, durable: "a" });
    await t.bus.ensureConsumer({ stream, durable: "b" });
    for (const body of ["0", "1", "2"]) await t.bus.publish(`${stream}.e`, body);
    expect(await t.storedCount(stream)).toBe(3);

    const seenByA: string[] = [];
    const subA = t.bus.consume({ stream, durable: "a" }, async (m) => {
      seenByA.push(m.string());
    });
    await expect.poll(() => seenByA.length, POLL).toBe(3);
    await subA.stop();
    // b has not acknowledged them yet
    expect(await t.storedCount(stream)).toBe(3);

    const seenByB: string[] = [];
    t.bus.consume({ stream, durable: "b" }, async (m) => {
      seenByB.push(m.string());
    });
    await expect.poll(() => seenByB.length, POLL).toBe(3);
    await expect.poll(() => t.storedCount(stream), POLL).toBe(0);
    expect(seenByA).toEqual(["0", "1", "2"]);
    expect(seenByB).toEqual(["0", "1", "2"]);
  });

  it("shares one durable between two subscriptions, each message handled once", async () => {
    const stream = await t.createStream();
    const total = 20;
    for (let i = 0; i < total; i++) await t.bus.publish(`${stream}.job`, String(i));
    const handledBy = new Map<number, string[]>();
    const handler = (label: string) => async (m: BusMessage) => {
      handledBy.set(m.seq, [...(handledBy.get(m.seq) ?? []), label]);
      await sleep(20);
    };
    t.bus.consume({ stream, durable: "shared" }, handler("a"));
    t.bus.consume({ stream, durable: "shared" }, handler("b"));
    await expect.poll(() => handledBy.size, { ...POLL, timeout: 5_000 }).toBe(total);
    // give a wrongly repeated delivery time to show up
    await sleep(100);
    const labels = [...handledBy.values()];
    expect(labels.every((l) => l.length === 1)).toBe(true);
    expect(new Set(labels.flat())).toEqual(new Set(["a", "b"]));
  });

  it("removes acknowledged messages from a workqueue stream and refuses an overlapping consumer", async () => {
    const stream = await t.createStream("workqueue");
    await t.bus.ensureConsumer({ stream, durable: "jobs", filterSubject: `${stream}.jobs.*` });
    await expect(
      t.bus.ensureConsumer({ stream, durable: "rival", filterSubject: `${stream}.jobs.urgent` }),
    ).rejects.toThrow(/not unique/);
    await expect(t.bus.ensureConsumer({ stream, durable: "everything" })).rejects.toThrow();
    await t.bus.ensureConsumer({ stream, durable: "mail", filterSubject: `${stream}.mail` });

    for (const job of ["x", "y", "z"]) await t.bus.publish(`${stream}.jobs.${job}`, job);
    expect(await t.storedCount(stream)).toBe(3);
    const done: string[] = [];
    t.bus.consume({ stream, durable: "jobs", filterSubject: `${stream}.jobs.*` }, async (m) => {
      done.push(m.string());
    });
    await expect.poll(() => done.length, POLL).toBe(3);
    await expect.poll(() => t.storedCount(stream), POLL).toBe(0);
  });
}
