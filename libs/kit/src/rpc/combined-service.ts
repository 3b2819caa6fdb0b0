import { type ConnectRouter, createContextValues, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../logger.js";
import { createServiceRoutes, type ReadinessCheck, type ServiceModule } from "./rpc-server.js";

/**
 * Several services as one ServiceModule, for one network server that hosts them all (the embedded
 * mode's internal port, docs/operations.md "Calling the services directly"): every call goes through
 * the server interceptors of the service that owns its method (errors, authentication, input limits,
 * idempotency: as on that service's own port in the distributed mode) and starts with that
 * service's context values. grpc.health.v1 and reflection are served once, for all of them: the
 * "readiness" check runs every service's readiness checks, reflection lists every service. Health
 * and reflection, public in every service's authentication, pass through the first service's
 * interceptors.
 */
export function combineServices(name: string, logger: Logger, services: ServiceModule[]): ServiceModule {
  const first = services[0];
  if (!first) throw new Error("combineServices needs at least one service");
  /** The service that owns each protobuf service served, by type name: filled as the routes are registered. */
  const owners = new Map<string, ServiceModule>();
  let draining = false;
  const isDraining = () => draining;
  const readiness: ReadinessCheck[] = services.flatMap((s) =>
    s.readiness.map((c) => ({ name: `${s.name} ${c.name}`, check: c.check })),
  );
  const routes = createServiceRoutes({
    logger,
    readiness,
    isDraining,
    register: (router) => {
      for (const service of services) {
        if (!service.register) throw new Error(`the ${service.name} service cannot be combined: it has no register`);
        service.register(
          Object.create(router, {
            service: {
              value: (...args: Parameters<ConnectRouter["service"]>) => {
                owners.set(args[0].typeName, service);
                return router.service(...args);
              },
            },
          }),
        );
      }
    },
  });
  // Connect applies a router's interceptors on each call; this one applies the owner's, in their order.
  const dispatch: Interceptor = (next) => (req) => {
    const owner = owners.get(req.service.typeName) ?? first;
    return owner.interceptors.reduceRight((n, interceptor) => interceptor(n), next)(req);
  };
  return {
    name,
    logger,
    routes,
    interceptors: [dispatch],
    contextValues: (path) => owners.get(path.split("/")[1] ?? "")?.contextValues?.(path) ?? createContextValues(),
    readiness,
    isDraining,
    startDraining: () => {
      draining = true;
    },
  };
}
