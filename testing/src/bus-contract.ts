/**
 * The behaviour every Bus backend must show, run against the in-process bus (unit) and a real
 * nats-server (integration). Timing tests use ackWait of a few hundred ms; each test makes its own
 * streams, named uniquely, and `cleanup` removes them with the bus.
 */
import type { Bus, Retention, StreamSpec } from "@kiln/kit/bus";
import { afterEach, beforeEach, describe } from "vitest";
import { describeBusDelivery } from "./bus-contract-delivery.js";
import { type BusUnderTest, uniqueStreamName } from "./bus-contract-fixtures.js";
import { describeBusStreams } from "./bus-contract-streams.js";

export type MakeBus = () => Promise<{ bus: Bus; cleanup: () => Promise<void> }>;

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

    const t: BusUnderTest = {
      get bus() {
        return bus;
      },
      async createStream(retention: Retention = "limits", extra: Partial<StreamSpec> = {}): Promise<string> {
        const stream = uniqueStreamName();
        await bus.ensureStream({ name: stream, subjects: [`${stream}.>`], retention, ...extra });
        return stream;
      },
      storedCount: async (stream) => (await bus.streamInfo(stream)).messages,
    };
    describeBusStreams(t);
    describeBusDelivery(t);
  });
}
