import type { Interceptor, Transport } from "@connectrpc/connect";
import { createRouterTransport } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { ServiceModule } from "./rpc-server.js";

export interface NetworkTransport {
  transport: Transport;
  /** Closes the HTTP/2 session. */
  close(): void;
}

/** A Connect client transport to another service over HTTP/2 (h2c), binary protobuf. */
export function createNetworkTransport(options: {
  baseUrl: string;
  interceptors: Interceptor[];
  defaultTimeoutMs?: number;
}): NetworkTransport {
  const sessionManager = new Http2SessionManager(options.baseUrl, {
    idleConnectionTimeoutMs: 60_000,
    pingIntervalMs: 30_000,
  });
  const transport = createConnectTransport({
    baseUrl: options.baseUrl,
    httpVersion: "2",
    sessionManager,
    interceptors: options.interceptors,
    defaultTimeoutMs: options.defaultTimeoutMs ?? 30_000,
  });
  return { transport, close: () => sessionManager.abort() };
}

/**
 * The embedded mode's transport: the same routes and interceptors as the network server, the real
 * serialization, no socket.
 */
export function createInProcessTransport(service: ServiceModule, clientInterceptors: Interceptor[]): Transport {
  return createRouterTransport(service.routes, {
    router: { interceptors: service.interceptors },
    transport: { interceptors: clientInterceptors },
  });
}
