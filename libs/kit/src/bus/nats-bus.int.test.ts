import { describeBusContract } from "@kiln/testing/bus-contract";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { describe, expect, inject, it } from "vitest";
import { startNatsServer } from "../../../../test/support/servers.js";
import { type Bus, BusUnavailableError } from "./bus.js";
import { createNatsBus } from "./nats-bus.js";

const natsUrl = inject("natsUrl");

/** The bus, with the streams it created deleted on cleanup so the shared server stays tidy. */
async function makeBus(): Promise<{ bus: Bus; cleanup: () => Promise<void> }> {
  const bus = await createNatsBus({ url: natsUrl, name: "bus-contract" });
  const streams = new Set<string>();
  const tracked: Bus = {
    ...bus,
    ensureStream: (spec) => {
      streams.add(spec.name);
      return bus.ensureStream(spec);
    },
  };
  const cleanup = async () => {
    await bus.close();
    const nc = await connect({ servers: natsUrl });
    const jsm = await jetstreamManager(nc);
    for (const name of streams) await jsm.streams.delete(name).catch(() => false);
    await nc.close();
  };
  return { bus: tracked, cleanup };
}

describeBusContract("nats bus", makeBus);

describe("nats bus against its own server", () => {
  it("survives a nats-server restart: publish and ping fail while it is down, then work again", async () => {
    let server = await startNatsServer();
    const port = Number(new URL(server.url).port);
    const logs: string[] = [];
    const bus = await createNatsBus({ url: server.url, name: "outage", log: (msg) => logs.push(msg) });
    try {
      const stream = `OUTAGE${Date.now()}`;
      await bus.ensureStream({ name: stream, subjects: [`${stream}.>`], retention: "limits" });
      const received: string[] = [];
      bus.consume({ stream, durable: "d", ackWaitMs: 2_000 }, async (m) => {
        received.push(m.string());
      });
      await bus.publish(`${stream}.e`, "before");
      await expect.poll(() => received, { timeout: 5_000 }).toEqual(["before"]);
      await bus.ping();

      await server.stop();
      const startedMs = Date.now();
      await expect(bus.publish(`${stream}.e`, "during")).rejects.toThrow();
      expect(Date.now() - startedMs).toBeLessThan(7_000);
      await expect(bus.ping()).rejects.toThrow();

      server = await startNatsServer({ dir: server.dir, port });
      const answers = () =>
        bus.ping().then(
          () => true,
          () => false,
        );
      await expect.poll(answers, { timeout: 10_000, interval: 200 }).toBe(true);
      await bus.publish(`${stream}.e`, "after");
      await expect.poll(() => received, { timeout: 15_000, interval: 100 }).toContain("after");
      expect(logs).toContain("nats: disconnected");
      expect(logs).toContain("nats: reconnected");
    } finally {
      await bus.close();
      await server.stop({ removeData: true });
    }
  });

  it("refuses a stream read and a publish at once while disconnected, not after the request timeout", async () => {
    let server = await startNatsServer();
    const port = Number(new URL(server.url).port);
    const logs: string[] = [];
    const bus = await createNatsBus({ url: server.url, name: "outage-fast", log: (msg) => logs.push(msg) });
    try {
      const stream = `FAST${Date.now()}`;
      await bus.ensureStream({ name: stream, subjects: [`${stream}.>`], retention: "limits" });
      await server.stop();
      await expect.poll(() => logs, { timeout: 10_000, interval: 50 }).toContain("nats: disconnected");
      const startedMs = Date.now();
      const settled = await Promise.allSettled([bus.streamInfo(stream), bus.publish(`${stream}.e`, "during")]);
      // The client's own answer would come at the request timeout (5 s): a run reading the catalog's
      // counter would wait that long; this bound is half of it, generous on a loaded machine.
      expect(Date.now() - startedMs).toBeLessThan(2_500);
      for (const s of settled) {
        expect(s.status).toBe("rejected");
        expect((s as PromiseRejectedResult).reason).toBeInstanceOf(BusUnavailableError);
      }
      server = await startNatsServer({ dir: server.dir, port });
      await expect
        .poll(
          () =>
            bus.streamInfo(stream).then(
              () => true,
              () => false,
            ),
          { timeout: 15_000, interval: 200 },
        )
        .toBe(true);
    } finally {
      await bus.close();
      await server.stop({ removeData: true });
    }
  });

  it("close() returns promptly with a consume loop running", async () => {
    const bus = await createNatsBus({ url: natsUrl });
    const stream = `CLOSE${Date.now()}`;
    await bus.ensureStream({ name: stream, subjects: [`${stream}.>`], retention: "limits" });
    bus.consume({ stream, durable: "idle" }, async () => {});
    await bus.publish(`${stream}.e`, "x");
    await new Promise((resolve) => setTimeout(resolve, 200));
    const startedMs = Date.now();
    await bus.close();
    expect(Date.now() - startedMs).toBeLessThan(1_000);
    await expect(bus.ping()).rejects.toThrow();
    const nc = await connect({ servers: natsUrl });
    await (await jetstreamManager(nc)).streams.delete(stream);
    await nc.close();
  });

  it("keeps two platforms with different prefixes apart on one server", async () => {
    const stamp = Date.now();
    const [a, b] = await Promise.all(["pa", "pb"].map((p) => createNatsBus({ url: natsUrl, prefix: `${p}${stamp}` })));
    try {
      const spec = { name: "WORK", subjects: ["work.items"], retention: "workqueue" as const };
      await a?.ensureStream(spec);
      await b?.ensureStream(spec);
      const got: Record<string, string[]> = { a: [], b: [] };
      a?.consume({ stream: "WORK", durable: "w" }, async (m) => {
        got.a?.push(`${m.subject}:${m.string()}`);
      });
      b?.consume({ stream: "WORK", durable: "w" }, async (m) => {
        got.b?.push(`${m.subject}:${m.string()}`);
      });
      const ack = await a?.publish("work.items", "for a");
      expect(ack?.stream).toBe("WORK");
      await b?.publish("work.items", "for b");
      await expect.poll(() => [got.a, got.b], { timeout: 5_000 }).toEqual([["work.items:for a"], ["work.items:for b"]]);
      // The ack leaves after the handler has returned: the work queue is empty once it arrives.
      await expect.poll(async () => (await a?.streamInfo("WORK"))?.messages, { timeout: 5_000 }).toBe(0);
    } finally {
      const nc = await connect({ servers: natsUrl });
      const jsm = await jetstreamManager(nc);
      await Promise.all([a?.close(), b?.close()]);
      for (const p of ["pa", "pb"]) await jsm.streams.delete(`${p}${stamp}_WORK`).catch(() => false);
      await nc.close();
    }
  });

  it("hands back at once the messages it pulled but had not started when stopped", async () => {
    const bus = await createNatsBus({ url: natsUrl });
    const stream = `HANDBACK${Date.now()}`;
    const nc = await connect({ servers: natsUrl });
    const jsm = await jetstreamManager(nc);
    const ACK_WAIT_MS = 5_000;
    try {
      await bus.ensureStream({ name: stream, subjects: [`${stream}.>`], retention: "workqueue" });
      for (let i = 0; i < 12; i++) await bus.publish(`${stream}.e`, String(i));
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const first: string[] = [];
      const sub = bus.consume(
        { stream, durable: "d", ackWaitMs: ACK_WAIT_MS },
        async (m) => {
          first.push(m.string());
          await gate;
        },
        { concurrency: 4 },
      );
      // Four in hand, and more delivered to this subscription than it has started.
      await expect.poll(() => first.length, { timeout: 5_000 }).toBe(4);
      const pending = async () => (await jsm.consumers.info(stream, "d")).num_ack_pending;
      await expect.poll(pending, { timeout: 5_000 }).toBeGreaterThan(4);
      const stopped = sub.stop();
      release();
      await stopped;
      // Those come back now with a second delivery, not after the ack wait.
      const second: { body: string; deliveryCount: number; atMs: number }[] = [];
      const startedMs = Date.now();
      const sub2 = bus.consume(
        { stream, durable: "d", ackWaitMs: ACK_WAIT_MS },
        async (m) => {
          second.push({ body: m.string(), deliveryCount: m.deliveryCount, atMs: Date.now() - startedMs });
        },
        { concurrency: 4 },
      );
      const handedBack = () => second.filter((m) => m.deliveryCount > 1 && m.atMs < ACK_WAIT_MS / 2).length;
      await expect.poll(handedBack, { timeout: ACK_WAIT_MS / 2 }).toBeGreaterThan(0);
      // Delivery is at least once: every message is handled, none lost.
      const all = () => new Set([...first, ...second.map((m) => m.body)]).size;
      await expect.poll(all, { timeout: ACK_WAIT_MS * 2 }).toBe(12);
      await sub2.stop();
    } finally {
      await bus.close();
      await jsm.streams.delete(stream).catch(() => false);
      await nc.close();
    }
  });
});
