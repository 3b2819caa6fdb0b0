import type { Http2Session } from "node:http2";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { fastifyConnectPlugin } from "@connectrpc/connect-fastify";
import { Health, HealthCheckResponse_ServingStatus } from "@kiln/proto/health";
import { fastify, LogController } from "fastify";
import { newId } from "../ids.js";
import { createInFlight } from "../lifecycle.js";
import type { Logger } from "../logger.js";
import { type AuthInterceptorOptions, createAuthInterceptor } from "./auth-interceptor.js";
import { createErrorInterceptor } from "./connect-errors.js";
import { createIdempotencyInterceptor, type IdempotencyOptions } from "./idempotency-interceptor.js";

export interface ReadinessCheck {
  name: string;
  /** Rejects when the dependency is not usable. */
  check: () => Promise<void>;
}

export interface ServiceRoutesOptions {
  logger: Logger;
  /** Registers the service's own Connect handlers. */
  register: (router: ConnectRouter) => void;
  readiness: ReadinessCheck[];
  /** True once shutdown began: readiness fails so no new work is routed here. */
  isDraining?: () => boolean;
}

/** Path of the gRPC health check; served without credentials. */
export const HEALTH_CHECK_PATH = "/grpc.health.v1.Health/Check";

/** Runs every readiness check; resolves to the failures (empty when ready). */
export async function failedReadiness(checks: ReadinessCheck[], isDraining?: () => boolean) {
  if (isDraining?.()) return [{ name: "shutdown", error: "draining" }];
  const results = await Promise.all(
    checks.map(async (c) => {
      try {
        await withTimeout(c.check(), 2_000, `${c.name} check timed out`);
        return undefined;
      } catch (e) {
        return { name: c.name, error: e instanceof Error ? e.message : String(e) };
      }
    }),
  );
  return results.filter((r): r is { name: string; error: string } => r !== undefined);
}

/**
 * The routes a service serves, in both run modes: its handlers plus grpc.health.v1.Health
 * (service "" is liveness, service "readiness" runs the readiness checks).
 */
export function createServiceRoutes(options: ServiceRoutesOptions): (router: ConnectRouter) => void {
  return (router) => {
    options.register(router);
    router.service(Health, {
      async check(req) {
        if (req.service === "" || req.service === "liveness")
          return { status: HealthCheckResponse_ServingStatus.SERVING };
        if (req.service !== "readiness") return { status: HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN };
        const failed = await failedReadiness(options.readiness, options.isDraining);
        return {
          status:
            failed.length === 0
              ? HealthCheckResponse_ServingStatus.SERVING
              : HealthCheckResponse_ServingStatus.NOT_SERVING,
        };
      },
    });
  };
}

/** A service as both run modes host it: its routes and the server interceptors they run behind. */
export interface ServiceModule {
  name: string;
  logger: Logger;
  routes: (router: ConnectRouter) => void;
  /** Error mapping first, then authentication. */
  interceptors: Interceptor[];
  readiness: ReadinessCheck[];
  isDraining: () => boolean;
  /** Readiness fails from now on, so load balancers stop routing here. */
  startDraining(): void;
}

export function defineService(
  options: Omit<ServiceRoutesOptions, "isDraining"> & {
    name: string;
    auth: AuthInterceptorOptions;
    /** Creating and running methods that honour an idempotency key. */
    idempotency?: IdempotencyOptions;
  },
): ServiceModule {
  let draining = false;
  const isDraining = () => draining;
  return {
    name: options.name,
    logger: options.logger,
    routes: createServiceRoutes({ ...options, isDraining }),
    interceptors: [
      createErrorInterceptor(options.logger),
      createAuthInterceptor({
        ...options.auth,
        publicPaths: new Set([HEALTH_CHECK_PATH, ...(options.auth.publicPaths ?? [])]),
      }),
      ...(options.idempotency ? [createIdempotencyInterceptor(options.idempotency)] : []),
    ],
    readiness: options.readiness,
    isDraining,
    startDraining: () => {
      draining = true;
    },
  };
}

/**
 * A service's network server: Connect, gRPC and gRPC-Web on one cleartext HTTP/2 (h2c) port, plus
 * GET /healthz and /readyz. Builds, never listens: main.ts does that.
 */
export async function buildRpcServer(service: ServiceModule) {
  const app = fastify({
    http2: true,
    // Idle HTTP/2 sessions of clients would otherwise hold close() open (tech-notes §1.3).
    forceCloseConnections: true,
    loggerInstance: service.logger,
    // The gateway logs each REST request; services log only what goes wrong.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: "x-request-id",
    genReqId: () => newId("req"),
  });
  await app.register(fastifyConnectPlugin, {
    routes: service.routes,
    interceptors: service.interceptors,
    // Large enough for any REST body the gateway accepts (1 MiB) plus encoding overhead.
    readMaxBytes: 4 * 1024 * 1024,
  });
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_req, reply) => {
    const failed = await failedReadiness(service.readiness, service.isDraining);
    return reply
      .code(failed.length === 0 ? 200 : 503)
      .send({ status: failed.length === 0 ? "ok" : "unavailable", failed });
  });
  const inFlight = createInFlight();
  app.addHook("onRequest", async () => inFlight.enter());
  app.addHook("onResponse", async () => inFlight.leave());
  const sessions = new Set<Http2Session>();
  app.server.on("session", (session: Http2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  // Not the Fastify instance itself: it is thenable, and an async function would await it.
  return {
    app,
    /**
     * Graceful stop: readiness fails, the listener closes and every HTTP/2 session gets a GOAWAY
     * at once, so clients open nothing new here (a stream past the GOAWAY is refused, which
     * clients retry elsewhere: createNetworkTransport does). Requests in flight get up to
     * `graceMs` to finish, then the server closes whatever is left.
     */
    async drainAndClose(graceMs: number): Promise<void> {
      const deadline = Date.now() + graceMs;
      service.startDraining();
      app.server.close();
      // GOAWAY: a closing session ends once its open streams are done, including streams whose
      // request has not reached a route yet (which the in-flight count does not see).
      const closed = [...sessions].map((session) => new Promise((resolve) => session.once("close", resolve)));
      for (const session of sessions) session.close();
      await withTimeout(Promise.all(closed), graceMs, "drain").catch(() => undefined);
      await inFlight.idle(Math.max(0, deadline - Date.now()));
      await app.close();
    },
  };
}

export type RpcServer = Awaited<ReturnType<typeof buildRpcServer>>;

async function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
