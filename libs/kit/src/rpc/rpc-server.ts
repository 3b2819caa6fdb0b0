import type { Http2Session } from "node:http2";
import type { Socket } from "node:net";
import type { DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ContextValues,
  createContextValues,
  type Interceptor,
} from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus } from "@kiln/proto/health";
import { fastify, LogController } from "fastify";
import { newId } from "../ids.js";
import { createInFlight, sleep } from "../lifecycle.js";
import { LIMITS } from "../limits.js";
import type { Logger } from "../logger.js";
import { type AuthInterceptorOptions, createAuthInterceptor } from "./auth-interceptor.js";
import { createErrorInterceptor } from "./connect-errors.js";
import { connectRoutes } from "./connect-routes.js";
import { createIdempotencyInterceptor, type IdempotencyOptions } from "./idempotency-interceptor.js";
import { createInputInterceptor } from "./input-interceptor.js";
import { REFLECTION_PATHS, registerReflection } from "./reflection.js";

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
const HEALTH_WATCH_PATH = "/grpc.health.v1.Health/Watch";
/** How often Watch re-runs the checks to report a change. */
const HEALTH_WATCH_INTERVAL_MS = 5_000;

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
 * (service "" is liveness, service "readiness" runs the readiness checks; any other name is
 * NOT_FOUND, as the protocol says) and gRPC server reflection of everything it serves.
 */
export function createServiceRoutes(options: ServiceRoutesOptions): (router: ConnectRouter) => void {
  const statusOf = async (service: string) => {
    if (service === "" || service === "liveness") return HealthCheckResponse_ServingStatus.SERVING;
    if (service !== "readiness") return undefined;
    const failed = await failedReadiness(options.readiness, options.isDraining);
    return failed.length === 0
      ? HealthCheckResponse_ServingStatus.SERVING
      : HealthCheckResponse_ServingStatus.NOT_SERVING;
  };
  return (router) => {
    // The services the handlers register, for reflection.
    const served: DescService[] = [];
    const recording: ConnectRouter = Object.create(router, {
      service: {
        value: (...args: Parameters<ConnectRouter["service"]>) => {
          served.push(args[0]);
          return router.service(...args);
        },
      },
    });
    options.register(recording);
    router.service(Health, {
      async check(req) {
        const status = await statusOf(req.service);
        if (status === undefined) throw new ConnectError(`unknown service "${req.service}"`, Code.NotFound);
        return { status };
      },
      // The current status at once, then each change, until the caller goes away.
      async *watch(req, context) {
        let last: HealthCheckResponse_ServingStatus | undefined;
        while (!context.signal.aborted) {
          const status = (await statusOf(req.service)) ?? HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN;
          if (status !== last) yield { status };
          last = status;
          await sleep(HEALTH_WATCH_INTERVAL_MS, context.signal);
        }
      },
    });
    registerReflection(router, [...served, Health]);
  };
}

/** A service as both run modes host it: its routes and the server interceptors they run behind. */
export interface ServiceModule {
  name: string;
  logger: Logger;
  routes: (router: ConnectRouter) => void;
  /**
   * The service's own handlers, without grpc.health.v1 and reflection: what a server hosting several
   * services mounts of each (combineServices). Set by defineService.
   */
  register?: (router: ConnectRouter) => void;
  /** Error mapping first, then authentication, then the request's text and sizes (docs/api.md "Limits"). */
  interceptors: Interceptor[];
  /**
   * The context values a call starts with, made as it arrives (before its message is read and its
   * interceptors run), from its path (`/package.Service/Method`). Both run modes call it.
   */
  contextValues?: (path: string) => ContextValues;
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
    contextValues?: ServiceModule["contextValues"];
  },
): ServiceModule {
  let draining = false;
  const isDraining = () => draining;
  return {
    name: options.name,
    logger: options.logger,
    routes: createServiceRoutes({ ...options, isDraining }),
    register: options.register,
    interceptors: [
      createErrorInterceptor(options.logger),
      createAuthInterceptor({
        ...options.auth,
        publicPaths: new Set([
          HEALTH_CHECK_PATH,
          HEALTH_WATCH_PATH,
          ...REFLECTION_PATHS,
          ...(options.auth.publicPaths ?? []),
        ]),
      }),
      // Text and sizes checked before a key is claimed: a refused request changes nothing.
      createInputInterceptor(),
      ...(options.idempotency ? [createIdempotencyInterceptor(options.idempotency)] : []),
    ],
    contextValues: options.contextValues,
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
    // Idle HTTP/2 sessions of clients would otherwise hold close() open (docs/architecture.md "RPC transport").
    forceCloseConnections: true,
    loggerInstance: service.logger,
    // The gateway logs each REST request; services log only what goes wrong.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: "x-request-id",
    genReqId: () => newId("req"),
  });
  await app.register(connectRoutes, {
    routes: service.routes,
    interceptors: service.interceptors,
    // Large enough for any body the gateway accepts (an import is the largest) plus encoding overhead.
    readMaxBytes: 2 * LIMITS.importBytes,
    // The call's path without its query; the plugin makes empty values for a service without the hook.
    contextValues: (request) => service.contextValues?.(request.url.split("?")[0] as string) ?? createContextValues(),
  });
  // A method no service here has: gRPC's UNIMPLEMENTED (status 12, as a trailers-only answer) for
  // gRPC and gRPC-Web callers, Connect's unimplemented (404) for Connect callers.
  app.setNotFoundHandler((request, reply) => {
    const contentType = String(request.headers["content-type"] ?? "");
    const message = `unknown method ${request.url.split("?")[0]}`;
    if (contentType.startsWith("application/grpc")) {
      // Trailers-only: the status in the one HEADERS frame that ends the stream, as gRPC expects.
      reply.hijack();
      reply.raw.stream.respond(
        {
          ":status": 200,
          "content-type": contentType.startsWith("application/grpc-web")
            ? "application/grpc-web+proto"
            : "application/grpc",
          "grpc-status": "12",
          "grpc-message": encodeURIComponent(message),
        },
        { endStream: true },
      );
      return;
    }
    return reply.code(404).header("content-type", "application/json").send({ code: "unimplemented", message });
  });
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_req, reply) => {
    const failed = await failedReadiness(service.readiness, service.isDraining);
    return reply
      .code(failed.length === 0 ? 200 : 503)
      .send({ status: failed.length === 0 ? "ok" : "unavailable", failed });
  });
  // Each frame of an answer goes out when written: with Nagle's algorithm a stream's closing frame
  // waited for the peer to acknowledge its data.
  app.server.on("connection", (socket: Socket) => socket.setNoDelay(true));
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
