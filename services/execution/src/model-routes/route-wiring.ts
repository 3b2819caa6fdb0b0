/** The model routes' parts of the execution service: store, cache, breakers, use cases, RPC. */
import type { ConnectRouter } from "@connectrpc/connect";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import type { Store } from "@kiln/kit/store";
import { createBreakerBoard } from "@kiln/models/circuit-breaker";
import type { ProviderRegistry } from "@kiln/models/registry";
import { createModelRoutes } from "./model-routes.js";
import { createRouteCache } from "./route-cache.js";
import type { ModelRoutesConfig } from "./route-config.js";
import { registerModelRouteRpc } from "./route-rpc.js";
import { ensureModelRouteIndexes, modelRouteCollection } from "./route-store.js";
import type { RouteResolver } from "./routed-registry.js";

export async function createModelRouteParts(deps: {
  store: Store;
  identityAuth: IdentityAuth;
  models: ProviderRegistry;
  config?: Partial<ModelRoutesConfig>;
}): Promise<{ resolver: RouteResolver; register(router: ConnectRouter): void }> {
  await ensureModelRouteIndexes(deps.store);
  const collection = modelRouteCollection(deps.store);
  const cache = createRouteCache(collection, { ttlMs: deps.config?.cacheTtlMs });
  const breakers = createBreakerBoard({
    failureThreshold: deps.config?.breakerFailures,
    openMs: deps.config?.breakerOpenMs,
  });
  const routes = createModelRoutes({
    routes: collection,
    identityAuth: deps.identityAuth,
    models: deps.models,
    cache,
    now: () => new Date(),
  });
  return { resolver: { cache, breakers }, register: (router) => registerModelRouteRpc(router, routes) };
}
