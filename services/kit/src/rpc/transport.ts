import { lookup } from "node:dns/promises";
import { connect as connectTcp, isIP } from "node:net";
import {
  clone,
  create,
  type DescMessage,
  type DescMethodUnary,
  type DescService,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import type {
  ConnectRouter,
  ContextValues,
  HandlerContext,
  Interceptor,
  Transport,
  UnaryRequest,
  UnaryResponse,
} from "@connectrpc/connect";
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  createRouterTransport,
  createServiceImplSpec,
} from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { raceAbort } from "../abort.js";
import type { Logger } from "../logger.js";
import { createEndpointHealth, type ProbedEndpoint } from "./endpoint-health.js";
import type { ServiceModule } from "./rpc-server.js";

export interface NetworkTransport {
  transport: Transport;
  /** Closes every HTTP/2 session. */
  close(): void;
}

export interface NetworkTransportOptions {
  /**
   * `http://host:port`, or several separated by commas. Each host name is resolved to all its
   * addresses (a Kubernetes headless Service gives one per ready pod) and resolved again every
   * `resolveIntervalMs`, so replicas that come and go are followed.
   */
  baseUrl: string;
  interceptors: Interceptor[];
  defaultTimeoutMs?: number;
  /** Default 5000 ms. */
  resolveIntervalMs?: number;
  /** Name resolution; tests replace it. Default: every address the system resolver knows. */
  resolve?: (hostname: string) => Promise<string[]>;
  /** Where "endpoint down" (warn) and "endpoint back" (info) are said. */
  logger?: Pick<Logger, "warn" | "info">;
}

interface Endpoint extends ProbedEndpoint {
  transport: Transport;
  sessions: Http2SessionManager;
  inFlight: number;
  /** It refused a connection or a stream, and no probe has connected since (endpoint-health.ts). */
  down: boolean;
  removed: boolean;
}

/** How many attempts one call gets. */
const MAX_ATTEMPTS = 4;
const RETRY_DELAY_MS = 100;

/**
 * A Connect client transport to a service over HTTP/2 (h2c), binary protobuf, spread over every
 * replica the base URL resolves to: each call goes to the replica with the fewest calls in flight.
 * A call that no replica started (connection refused, stream refused, a GOAWAY before the stream
 * opened: what a replica that is shutting down answers) is retried on another replica, so a
 * rolling restart loses no request. Nothing else is retried: a call a server may have run is not.
 * A replica that refused is left out until a background probe connects to it again.
 *
 * HTTP/2 multiplexes every call over one long-lived connection, so a Kubernetes ClusterIP Service
 * would send all of one client's calls to one pod: balancing here, over a headless Service, is what
 * spreads them.
 */
export function createNetworkTransport(options: NetworkTransportOptions): NetworkTransport {
  const targets = options.baseUrl
    .split(",")
    .map((u) => u.trim())
    .filter(Boolean)
    .map((u) => new URL(u));
  if (targets.length === 0) throw new Error("createNetworkTransport: no base URL");
  const resolve = options.resolve ?? resolveAll;
  let endpoints: Endpoint[] = [];
  let next = 0;
  let refreshing: Promise<void> | undefined;
  const health = createEndpointHealth({ logger: options.logger });

  function endpointOf(url: string): Endpoint {
    const sessions = new Http2SessionManager(
      url,
      { idleConnectionTimeoutMs: 60_000, pingIntervalMs: 30_000 },
      // Without Nagle's algorithm: a call's frames go out when written, not after the peer's ACK.
      { createConnection: (authority: URL) => connectTcp(tcpTarget(authority)) },
    );
    const transport = createConnectTransport({
      baseUrl: url,
      httpVersion: "2",
      sessionManager: sessions,
      interceptors: options.interceptors,
      defaultTimeoutMs: options.defaultTimeoutMs ?? 30_000,
      // Uncompressed answers: between the deployment's own processes the network is not what
      // runs short, the CPU is (Connect would otherwise gzip every answer above 1 KB, a list of
      // runs or a run with a long output, and the caller would inflate it).
      acceptCompression: [],
    });
    const connect = async () => (await sessions.connect()) !== "error";
    return { url, transport, sessions, connect, inFlight: 0, down: false, removed: false };
  }

  /** The URLs the targets resolve to now; a target that does not resolve keeps its name (the call then fails as unavailable). */
  async function currentUrls(): Promise<string[]> {
    const urls = await Promise.all(
      targets.map(async (t) => {
        const host = t.hostname.replace(/^\[|\]$/g, "");
        if (isIP(host)) return [t.origin];
        const addresses = await resolve(host).catch(() => []);
        if (addresses.length === 0) return [t.origin];
        return addresses.map((a) => `${t.protocol}//${isIP(a) === 6 ? `[${a}]` : a}:${t.port || "80"}`);
      }),
    );
    return [...new Set(urls.flat())];
  }

  function apply(urls: string[]) {
    const byUrl = new Map(endpoints.map((e) => [e.url, e]));
    const kept = urls.map((u) => byUrl.get(u) ?? endpointOf(u));
    for (const e of endpoints) {
      if (kept.includes(e)) continue;
      e.removed = true;
      if (e.inFlight === 0) e.sessions.abort();
    }
    endpoints = kept;
  }

  function refresh(): Promise<void> {
    refreshing ??= currentUrls()
      .then(apply)
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  }

  // Literal addresses need no lookup: usable at once.
  if (targets.every((t) => isIP(t.hostname.replace(/^\[|\]$/g, "")))) apply(targets.map((t) => t.origin));
  const timer = setInterval(() => void refresh().catch(() => undefined), options.resolveIntervalMs ?? 5_000);
  timer.unref();

  /** The endpoint with the fewest calls in flight among those up (round robin between equals), avoiding `tried`. */
  function pick(tried: Set<Endpoint>): Endpoint | undefined {
    const candidates = endpoints.filter((e) => !tried.has(e));
    const up = candidates.filter((e) => !e.down);
    const pool = up.length > 0 ? up : candidates;
    if (pool.length === 0) return undefined;
    next = (next + 1) % pool.length;
    let best = pool[next] as Endpoint;
    for (const e of pool) if (e.inFlight < best.inFlight) best = e;
    return best;
  }

  async function call<T>(
    timeoutMs: number | undefined,
    maxAttempts: number,
    attempt: (transport: Transport, timeoutMs?: number) => Promise<T>,
  ) {
    if (endpoints.length === 0) await refresh();
    const started = Date.now();
    const tried = new Set<Endpoint>();
    for (let n = 1; ; n++) {
      let endpoint = pick(tried);
      if (!endpoint) {
        // Every endpoint refused once: look the name up again, wait a little, try them all again.
        await Promise.all([refresh().catch(() => undefined), sleep(RETRY_DELAY_MS * n)]);
        tried.clear();
        endpoint = pick(tried);
        if (!endpoint) throw new ConnectError("no address to call", Code.Unavailable);
      }
      tried.add(endpoint);
      const remainingMs = timeoutMs === undefined ? undefined : Math.max(1, timeoutMs - (Date.now() - started));
      endpoint.inFlight++;
      try {
        return await attempt(endpoint.transport, remainingMs);
      } catch (e) {
        if (!isNeverStarted(e)) throw e;
        health.markDown(endpoint, e);
        void refresh().catch(() => undefined);
        if (n >= maxAttempts) throw e;
      } finally {
        endpoint.inFlight--;
        if (endpoint.removed && endpoint.inFlight === 0) endpoint.sessions.abort();
      }
    }
  }

  const transport: Transport = {
    unary(method, signal, timeoutMs, header, input, contextValues) {
      return call(timeoutMs, MAX_ATTEMPTS, (t, remainingMs) =>
        t.unary(method, signal, remainingMs, header, input, contextValues),
      );
    },
    stream(method, signal, timeoutMs, header, input, contextValues) {
      // Balanced, never retried: a request stream can be read only once.
      return call(timeoutMs, 1, (t, remainingMs) =>
        t.stream(method, signal, remainingMs, header, input, contextValues),
      );
    },
  };
  return {
    transport,
    close() {
      clearInterval(timer);
      health.close();
      for (const e of endpoints) e.sessions.abort();
    },
  };
}

/** Where a cleartext HTTP/2 session to `authority` connects, without Nagle's algorithm. */
function tcpTarget(authority: URL): { host: string; port: number; noDelay: true } {
  return { host: authority.hostname.replace(/^\[|\]$/g, ""), port: Number(authority.port || 80), noDelay: true };
}

async function resolveAll(hostname: string): Promise<string[]> {
  const found = await lookup(hostname, { all: true });
  const v4 = found.filter((a) => a.family === 4).map((a) => a.address);
  // Prefer IPv4 (localhost would otherwise count twice, as ::1 and 127.0.0.1).
  return v4.length > 0 ? v4 : found.map((a) => a.address);
}

/**
 * True when the server cannot have started the call: no connection, a refused stream (HTTP/2
 * REFUSED_STREAM guarantees the stream was not processed), or a session that had received GOAWAY.
 */
export function isNeverStarted(error: unknown): boolean {
  if (!(error instanceof ConnectError)) return false;
  // Whatever code it was mapped to: a reset with REFUSED_STREAM arrives as "unavailable", the same
  // refusal surfacing as the stream's error event ("Stream closed with error code
  // NGHTTP2_REFUSED_STREAM") as "internal".
  if (error.rawMessage.includes("REFUSED_STREAM")) return true;
  for (let e: unknown = error.cause; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (code === "ECONNREFUSED" || code === "ERR_HTTP2_GOAWAY_SESSION" || code === "EAI_AGAIN" || code === "ENOTFOUND")
      return true;
  }
  return false;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
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

type UnaryImpl = (request: unknown, context: HandlerContext) => unknown;

/** The unary implementations a service's routes register, by method path, as a router would see them. */
function unaryImplementations(service: ServiceModule): Map<string, UnaryImpl> {
  const impls = new Map<string, UnaryImpl>();
  const recorder = {
    handlers: [],
    service(desc: DescService, impl: Record<string, unknown>) {
      const spec = createServiceImplSpec(desc, impl as never);
      for (const m of Object.values(spec.methods)) {
        if (m.kind === "unary") impls.set(`/${desc.typeName}/${m.method.name}`, m.impl as UnaryImpl);
      }
      return recorder;
    },
    rpc() {
      return recorder;
    },
  };
  service.routes(recorder as unknown as ConnectRouter);
  return impls;
}

/** Client interceptors first (outermost), then the next function, as Connect applies them. */
function chain<T>(next: T, interceptors: Interceptor[]): T {
  return interceptors.reduceRight((n, interceptor) => interceptor(n as never) as T, next);
}

/**
 * The embedded mode's transport for unary calls: the client interceptors, then the service's own
 * server interceptors (errors, authentication, idempotency) and its implementation, in the same
 * order and with the same headers, context values and deadline as over the wire, but without
 * encoding messages, emulating HTTP or streaming envelopes. Messages are cloned at the boundary,
 * as serialization would copy them, so neither side shares objects with the other. Streaming
 * calls go through createInProcessTransport.
 */
export function createDirectTransport(service: ServiceModule, clientInterceptors: Interceptor[]): Transport {
  const impls = unaryImplementations(service);
  const routed = createInProcessTransport(service, clientInterceptors);
  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0] | undefined,
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      const path = `/${method.parent.typeName}/${method.name}`;
      const impl = impls.get(path);
      if (!impl) return routed.unary(method, signal, timeoutMs, header, input, contextValues);
      const url = `in-process:${path}`;
      // What the server side sees: a fresh request from the headers alone, as after the wire.
      const serve = async (req: UnaryRequest<I, O>): Promise<UnaryResponse<I, O>> => {
        const context = createHandlerContext({
          service: method.parent,
          method,
          protocolName: "in-process",
          requestMethod: "POST",
          url,
          timeoutMs,
          requestSignal: req.signal,
          requestHeader: req.header,
          contextValues: service.contextValues?.(path),
        });
        const handle = async (sreq: UnaryRequest<I, O>): Promise<UnaryResponse<I, O>> => {
          const output = await impl(sreq.message, context);
          return {
            stream: false,
            service: method.parent,
            method,
            header: context.responseHeader,
            trailer: context.responseTrailer,
            message: clone(method.output, create(method.output, output as MessageInitShape<O>)),
          };
        };
        const served = chain(
          handle,
          service.interceptors,
        )({
          stream: false,
          service: method.parent,
          method,
          requestMethod: "POST",
          url,
          signal: context.signal,
          header: context.requestHeader,
          contextValues: context.values,
          message: decodedAsAfterTheWire(method.input, req.message),
        });
        try {
          // A deadline or a cancelled caller ends the call even if the handler does not listen.
          return await raceAbort(served, context.signal);
        } finally {
          // Ends what the handler left listening, as a server does when a call ends; one reason
          // for all calls rather than a DOMException made for each.
          context.abort(CALL_ENDED);
        }
      };
      try {
        return await chain(
          serve,
          clientInterceptors,
        )({
          stream: false,
          service: method.parent,
          method,
          requestMethod: "POST",
          url,
          signal: signal ?? new AbortController().signal,
          header: new Headers(header),
          contextValues: contextValues ?? createContextValues(),
          message: create(method.input, input),
        });
      } catch (e) {
        throw ConnectError.from(e);
      }
    },
    stream: (...args) => routed.stream(...args),
  };
}

const CALL_ENDED = new ConnectError("the call has ended", Code.Canceled);

/**
 * The request as a server holds it after decoding: a copy, refused as invalid_argument where the
 * wire's decoding refuses it (a string that is not valid Unicode, which protobuf cannot carry).
 */
function decodedAsAfterTheWire<I extends DescMessage>(schema: I, message: MessageShape<I>): MessageShape<I> {
  try {
    return clone(schema, message);
  } catch (e) {
    throw new ConnectError(
      `cannot decode message ${schema.typeName}: ${e instanceof Error ? e.message : String(e)}`,
      Code.InvalidArgument,
    );
  }
}
