/**
 * The hook that lets a run name "route/<name>" as its model (docs/providers.md "Routes"): the
 * deployment's registry, seen from one organization, with the routes the run names loaded first.
 * Everything else resolves as before, through the registry.
 */
import { invalidArgument } from "@kiln/kit/errors";
import type { BreakerBoard } from "@kiln/models/circuit-breaker";
import type { ProviderRegistry } from "@kiln/models/registry";
import { createRoutedModel } from "@kiln/models/routes";
import type { RouteCache } from "./route-cache.js";
import { ROUTE_PREFIX } from "./route-rules.js";
import type { ModelRouteDoc } from "./route-store.js";

export interface RouteResolver {
  cache: RouteCache;
  /** One board per process: a target's breaker is per organization and model. */
  breakers: BreakerBoard;
  /** [0, 1) for weighted routes; default Math.random. */
  random?: () => number;
}

/**
 * `models` as `organizationId` sees it, for a run naming `modelIds` (null/undefined for "the
 * version's or the default"): the registry itself when none is a route.
 */
export async function routedRegistry(
  models: ProviderRegistry,
  routes: RouteResolver | undefined,
  organizationId: string,
  modelIds: readonly (string | null | undefined)[],
): Promise<ProviderRegistry> {
  const names = [...new Set(modelIds.filter((m): m is string => !!m?.startsWith(ROUTE_PREFIX)))].map((m) =>
    m.slice(ROUTE_PREFIX.length),
  );
  if (!routes || names.length === 0) return models;
  const loaded = new Map<string, ModelRouteDoc>();
  for (const name of names) {
    const doc = await routes.cache.get(organizationId, name);
    if (doc) loaded.set(name, doc);
  }
  return {
    ...models,
    resolve(modelId) {
      if (!modelId?.startsWith(ROUTE_PREFIX)) return models.resolve(modelId);
      const doc = loaded.get(modelId.slice(ROUTE_PREFIX.length));
      if (!doc) {
        throw invalidArgument(
          `unknown model "${modelId}": this organization has no such route (GET /api/model-routes)`,
          [{ field: "model", issue: "is not a route of this organization" }],
        );
      }
      return createRoutedModel(
        {
          name: doc.name,
          strategy: doc.strategy,
          targets: doc.targets,
          retryOn: doc.retryOn,
          ...(doc.attemptTimeoutMs !== null ? { attemptTimeoutMs: doc.attemptTimeoutMs } : {}),
        },
        {
          resolve: (id) => models.resolve(id),
          breakers: routes.breakers,
          breakerKey: (id) => `${organizationId}\u0000${id}`,
          ...(routes.random ? { random: routes.random } : {}),
        },
      );
    },
  };
}
