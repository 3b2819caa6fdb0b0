import { type Client, createClient } from "@connectrpc/connect";
import { IdentityService } from "@kiln/proto/identity";
import { createRemoteIdentityAuth, type IdentityAuth } from "../auth/authorizer.js";
import { createInternalTokens, type InternalTokens } from "../auth/internal-token.js";
import type { Bus } from "../bus/bus.js";
import { createNatsBus } from "../bus/nats-bus.js";
import { exitOnSignal, guardUncaughtExceptions } from "../lifecycle.js";
import { createLogger, type Logger } from "../logger.js";
import { createMongoStore } from "../store/mongo-store.js";
import type { Store } from "../store/store.js";
import { createForwardInterceptor } from "./auth-interceptor.js";
import { buildRpcServer, type ServiceModule } from "./rpc-server.js";
import { createNetworkTransport } from "./transport.js";

export interface ServiceProcessConfig {
  HOST: string;
  PORT: number;
  LOG_LEVEL: string;
  MONGODB_URL: string;
  MONGODB_DATABASE: string;
  INTERNAL_AUTH_SECRET: string;
  SHUTDOWN_GRACE_MS: number;
  NATS_URL?: string;
  IDENTITY_URL?: string;
}

/** What the distributed mode gives a service to build itself from. */
export interface ServiceProcessDeps {
  logger: Logger;
  store: Store;
  tokens: InternalTokens;
  /** Set when the config has NATS_URL. */
  bus?: Bus;
  /** Set when the config has IDENTITY_URL. */
  identity?: { client: Client<typeof IdentityService>; auth: IdentityAuth };
}

/**
 * The distributed mode's start-up of one service: connects its store (and bus, and identity
 * client), builds it, listens, and on SIGTERM drains requests in flight, then closes everything.
 */
export async function runServiceProcess(
  name: string,
  config: ServiceProcessConfig,
  build: (deps: ServiceProcessDeps) => Promise<ServiceModule & { close?: () => Promise<void> }>,
): Promise<void> {
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  guardUncaughtExceptions(logger);
  const tokens = createInternalTokens(config.INTERNAL_AUTH_SECRET);
  const store = createMongoStore({
    url: config.MONGODB_URL,
    database: config.MONGODB_DATABASE,
    appName: `kiln-${name}`,
  });
  const bus = config.NATS_URL ? await createNatsBus({ url: config.NATS_URL, name: `kiln-${name}` }) : undefined;
  const identityTransport = config.IDENTITY_URL
    ? createNetworkTransport({
        baseUrl: config.IDENTITY_URL,
        interceptors: [createForwardInterceptor(tokens, { type: "service", id: name })],
      })
    : undefined;
  const identityClient = identityTransport ? createClient(IdentityService, identityTransport.transport) : undefined;
  const service = await build({
    logger,
    store,
    tokens,
    bus,
    identity: identityClient ? { client: identityClient, auth: createRemoteIdentityAuth(identityClient) } : undefined,
  });
  const server = await buildRpcServer(service);
  const address = await server.app.listen({ host: config.HOST, port: config.PORT });
  logger.info({ address }, `${name} listening`);
  exitOnSignal(logger, config.SHUTDOWN_GRACE_MS, async () => {
    await server.drainAndClose(config.SHUTDOWN_GRACE_MS);
    await service.close?.();
    identityTransport?.close();
    await bus?.close();
    await store.close();
  });
}
