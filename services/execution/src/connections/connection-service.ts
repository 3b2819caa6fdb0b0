/**
 * Provider connections in the execution service: their collection, the change counter on the bus,
 * the registry's layer per organization and the use cases, built once by createExecutionService.
 */

import { GENERATIONS } from "@kiln/contracts/bus-names";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import type { Bus, StreamSpec } from "@kiln/kit/bus";
import { createGeneration, generationStream, watchGeneration } from "@kiln/kit/bus/generation";
import type { Logger } from "@kiln/kit/logger";
import type { ResolveHost } from "@kiln/kit/outbound";
import type { Store } from "@kiln/kit/store";
import type { ProvidersConfig } from "@kiln/models/registry";
import type { ConnectionsConfig } from "./connection-config.js";
import { createPolicyFetch } from "./connection-fetch.js";
import { createConnectionLayer } from "./connection-layer.js";
import { connectionCollection, ensureConnectionIndexes } from "./connection-store.js";
import { createConnections } from "./connections.js";

/** The connections' change counter (bus/generation.ts): bumped after every write, read before a cached list is used. */
export const CONNECTIONS_GENERATION: StreamSpec = generationStream(GENERATIONS.providerConnections);

export interface ConnectionPartsDeps {
  store: Store;
  bus: Bus;
  logger: Logger;
  identityAuth: IdentityAuth;
  config: ConnectionsConfig & { resolve?: ResolveHost };
  providers: ProvidersConfig;
  /** The deployment's provider ids, which no connection may be named. */
  deploymentProviders: ReadonlySet<string>;
}

export async function createConnectionParts(deps: ConnectionPartsDeps) {
  await ensureConnectionIndexes(deps.store);
  await deps.bus.ensureStream(CONNECTIONS_GENERATION);
  const generation = watchGeneration(
    deps.bus,
    createGeneration(deps.bus, deps.logger, CONNECTIONS_GENERATION),
    CONNECTIONS_GENERATION,
  );
  const collection = connectionCollection(deps.store);
  const fetch = createPolicyFetch({
    privateHosts: deps.config.privateHosts,
    ...(deps.config.resolve && { resolve: deps.config.resolve }),
  });
  const layer = createConnectionLayer({
    collection,
    secrets: deps.config.secrets,
    generation,
    fetch,
    timeoutMs: deps.providers.timeoutMs,
    maxRetries: deps.providers.maxRetries,
  });
  const connections = createConnections({
    collection,
    identityAuth: deps.identityAuth,
    layer,
    secrets: deps.config.secrets,
    privateHosts: deps.config.privateHosts,
    fetch,
    deploymentProviders: deps.deploymentProviders,
    now: () => new Date(),
    onCounterError: (err) => deps.logger.warn({ err }, "the provider connections' change counter could not be moved"),
  });
  return { layer, connections, stop: () => generation.stop() };
}
