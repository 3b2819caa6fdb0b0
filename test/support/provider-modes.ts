/**
 * The two run modes over real HTTP, optionally with the execution side given model providers (an
 * OpenAI stub's, usually): `env` is the execution service's environment in both
 * (OPENAI_COMPATIBLE_PROVIDERS, MODEL_CONCURRENCY, PROVIDER_PRIVATE_HOSTS, ...), read as the
 * execution service and `pnpm start` read it.
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { hostPatternsOf } from "@kiln/kit/outbound/host-config";
import { inject } from "vitest";
import { startDistributed } from "./distributed.js";
import { startEmbedded } from "./embedded.js";

export interface RunningKiln {
  base: string;
  stop: () => Promise<void>;
}

export const PROVIDER_MODES = [
  {
    name: "embedded mode",
    async start(env?: Record<string, string>): Promise<RunningKiln> {
      const options = env && {
        providers: loadProvidersConfig(env),
        connections: { privateHosts: hostPatternsOf("PROVIDER_PRIVATE_HOSTS", env.PROVIDER_PRIVATE_HOSTS ?? "") },
      };
      const { kiln, baseUrl } = await startEmbedded(options ?? {});
      return { base: baseUrl, stop: () => kiln.close() };
    },
  },
  {
    name: "distributed mode (FerretDB, NATS)",
    async start(env?: Record<string, string>): Promise<RunningKiln> {
      const kiln = await startDistributed({
        mongoUrl: inject("mongoUrl"),
        natsUrl: inject("natsUrl"),
        ...(env ? { envOf: { execution: env } } : {}),
      });
      return { base: kiln.gatewayUrl, stop: () => kiln.stop() };
    },
  },
];
