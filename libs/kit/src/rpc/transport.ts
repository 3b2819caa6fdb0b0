import { lookup } from "node:dns/promises";
import { connect as connectTcp, isIP } from "node:net";
import type { Interceptor, Transport } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { Logger } from "../logger.js";
import { createEndpointHealth, type ProbedEndpoint } from "./endpoint-health.js";

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

export { createDirectTransport, createInProcessTransport } from "./in-process-transport.js";
