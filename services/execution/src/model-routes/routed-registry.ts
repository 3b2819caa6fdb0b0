/**
 * The hook that lets a run name "route/<name>" as its model (docs/providers.md "Routes"): the
 * deployment's registry, seen from one organization, with the routes the run names loaded first.
 * A route's targets resolve with that organization's scope, so they may be its provider
 * connections' models. Everything else resolves as before, through the registry.
 */
import { invalidArgument } from "@kiln/kit/errors";
import type { BreakerBoard } from "@kiln/models/circuit-breaker";
import type { ProviderError } from "@kiln/models/provider";
import type { ModelScope, ProviderRegistry, ResolvedModel } from "@kiln/models/registry";
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
  /** A target held back now (its token-per-minute limit spent, docs/usage.md): skipped without a call. */
  holdBack?: (target: ResolvedModel) => ProviderError | undefined;
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
  const scope = { organizationId };
  return {
    ...models,
    async resolve(modelId, modelScope) {
      if (!modelId?.startsWith(ROUTE_PREFIX)) return models.resolve(modelId, modelScope);
      const doc = loaded.get(modelId.slice(ROUTE_PREFIX.length));
      if (!doc) {
        throw invalidArgument(
          `unknown model "${modelId}": this organization has no such route (GET /api/model-routes)`,
          [{ field: "model", issue: "is not a route of this organization" }],
        );
      }
      // The targets as the route's organization sees them: its provider connections' models too.
      const targets = await resolvedTargets(models, doc.targets, scope);
      return createRoutedModel(
        {
          name: doc.name,
          strategy: doc.strategy,
          targets: doc.targets,
          retryOn: doc.retryOn,
          ...(doc.attemptTimeoutMs !== null ? { attemptTimeoutMs: doc.attemptTimeoutMs } : {}),
        },
        {
          resolve: (id) => {
            const target = targets.get(id);
            if (!target || "error" in target) throw target?.error ?? new Error(`"${id}" is not a target of this route`);
            return target.model;
          },
          breakers: routes.breakers,
          breakerKey: (id) => `${organizationId}\u0000${id}`,
          ...(routes.random ? { random: routes.random } : {}),
          ...(routes.holdBack ? { holdBack: routes.holdBack } : {}),
        },
      );
    },
  };
}

type ResolvedTarget = { model: ResolvedModel } | { error: unknown };

/** Each target resolved now (the executor is synchronous): its model, or why it cannot be used. */
async function resolvedTargets(
  models: ProviderRegistry,
  targets: readonly { model: string }[],
  scope: ModelScope,
): Promise<Map<string, ResolvedTarget>> {
  const entries = await Promise.all(
    targets.map(async (t): Promise<[string, ResolvedTarget]> => {
      try {
        return [t.model, { model: await models.resolve(t.model, scope) }];
      } catch (error) {
        return [t.model, { error }];
      }
    }),
  );
  return new Map(entries);
}
