/**
 * The two run modes an API suite runs in, each started fresh: the embedded platform on a free
 * port, and the distributed one (five processes on the global setup's FerretDB and nats-server).
 * `describe.each(RUN_MODES)("… in $name", …)` runs a suite in both.
 */
import { inject } from "vitest";
import { startDistributed } from "./distributed.js";
import { startEmbedded } from "./embedded.js";

export interface RunningKiln {
  base: string;
  stop(): Promise<void>;
}

export const RUN_MODES: { name: string; start(): Promise<RunningKiln> }[] = [
  {
    name: "embedded mode",
    async start() {
      const { kiln, baseUrl } = await startEmbedded();
      return { base: baseUrl, stop: () => kiln.close() };
    },
  },
  {
    name: "distributed mode (FerretDB, NATS)",
    async start() {
      const kiln = await startDistributed({ mongoUrl: inject("mongoUrl"), natsUrl: inject("natsUrl") });
      return { base: kiln.gatewayUrl, stop: () => kiln.stop() };
    },
  },
];
