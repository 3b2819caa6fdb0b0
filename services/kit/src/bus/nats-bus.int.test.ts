import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { describe, expect, inject, it } from "vitest";
import { startNatsServer } from "../../../../test/support/servers.js";
import type { Bus } from "./bus.js";
import { describeBusContract } from "./bus-contract.js";
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
});
