import type { DescService } from "@bufbuild/protobuf";
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
import { createNetworkTransport, type NetworkTransport } from "./transport.js";

export interface ServiceProcessConfig {
  HOST: string;
  PORT: number;
  LOG_LEVEL: string;
  MONGODB_URL: string;
  MONGODB_DATABASE: string;
  INTERNAL_AUTH_SECRET: string;
  SHUTDOWN_GRACE_MS: number;
  NATS_URL?: string;
  NATS_PREFIX?: string;
  NATS_STREAM_REPLICAS?: number;
  IDENTITY_URL?: string;
}

type IdentityPeer = { client: Client<typeof IdentityService>; auth: IdentityAuth };

export interface PeerOptions {
  /** The service the calls are made as when no caller's principal is forwarded; default the process's name. */
  as?: string;
  defaultTimeoutMs?: number;
}

/** What the distributed mode gives a service to build itself from. */
export interface ServiceProcessDeps<C extends ServiceProcessConfig = ServiceProcessConfig> {
  logger: Logger;
  store: Store;
  tokens: InternalTokens;
  /** Set when the config has NATS_URL (always, when its type requires it). */
  bus: C extends { NATS_URL: string } ? Bus : Bus | undefined;
  /** Set when the config has IDENTITY_URL (always, when its type requires it). */
  identity: C extends { IDENTITY_URL: string } ? IdentityPeer : IdentityPeer | undefined;
  /**
   * A client of another service at `baseUrl` (createNetworkTransport): a call forwards the
   * caller's principal, or acts as the service `as` without one. Closed once the server has drained
   * and the service settled: calls still finishing need it.
   */
  peer<S extends DescService>(service: S, baseUrl: string, options?: PeerOptions): Client<S>;
}

/**
 * A service as its process runs it: `close(graceMs)` stops its background work within `graceMs`,
 * while the server drains; `settle()`, once the server has drained, waits for what the last calls
 * left in the background (before the store and the bus close).
 */
export type ClosableService = ServiceModule & {
  close?: (graceMs: number) => Promise<void>;
  settle?: () => Promise<void>;
};

/** Time kept from the grace period for closing the bus and the store after the work is done. */
const CLOSE_RESERVE_MS = 1_000;

/**
 * The distributed mode's start-up of one service: connects its store (and bus, and identity
 * client), builds it, listens. On SIGTERM, at once: readiness fails, the server stops taking new
 * connections and streams, the service stops taking bus work; then the RPCs and the work in hand
 * get the grace period to finish (what is left is handed back), then everything closes.
 */
export async function runServiceProcess<C extends ServiceProcessConfig>(
  name: string,
  config: C,
  build: (deps: ServiceProcessDeps<C>) => ClosableService | Promise<ClosableService>,
): Promise<void> {
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  guardUncaughtExceptions(logger);
  const tokens = createInternalTokens(config.INTERNAL_AUTH_SECRET);
  const store = createMongoStore({
    url: config.MONGODB_URL,
    database: config.MONGODB_DATABASE,
    appName: `kiln-${name}`,
  });
  const bus = config.NATS_URL
    ? await createNatsBus({
        url: config.NATS_URL,
        name: `kiln-${name}`,
        prefix: config.NATS_PREFIX,
        streamReplicas: config.NATS_STREAM_REPLICAS,
      })
    : undefined;
  const peers: NetworkTransport[] = [];
  const peer = <S extends DescService>(service: S, baseUrl: string, options: PeerOptions = {}): Client<S> => {
    const transport = createNetworkTransport({
      baseUrl,
      interceptors: [createForwardInterceptor(tokens, { type: "service", id: options.as ?? name })],
      defaultTimeoutMs: options.defaultTimeoutMs,
      logger,
    });
    peers.push(transport);
    return createClient(service, transport.transport);
  };
  const identityClient = config.IDENTITY_URL ? peer(IdentityService, config.IDENTITY_URL) : undefined;
  const deps: ServiceProcessDeps = {
    logger,
    store,
    tokens,
    bus,
    identity: identityClient ? { client: identityClient, auth: createRemoteIdentityAuth(identityClient) } : undefined,
    peer,
  };
  // The config's type says which of bus and identity it sets; the values above follow the config.
  const service = await build(deps as ServiceProcessDeps<C>);
  const server = await buildRpcServer(service);
  const address = await server.app.listen({ host: config.HOST, port: config.PORT });
  logger.info({ address }, `${name} listening`);
  exitOnSignal(logger, config.SHUTDOWN_GRACE_MS, async () => {
    const workMs = Math.max(0, config.SHUTDOWN_GRACE_MS - CLOSE_RESERVE_MS);
    await Promise.all([server.drainAndClose(workMs), service.close?.(workMs)]);
    await service.settle?.();
    for (const transport of peers) transport.close();
    await bus?.close();
    await store.close();
  });
}
