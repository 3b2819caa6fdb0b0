import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { withPrincipal } from "@kiln/kit/principal";
import { ModelRouteService, type ModelRouteTarget } from "@kiln/proto/model-routes";
import type { ModelRoutes } from "./model-routes.js";
import type { ModelRouteDoc } from "./route-store.js";

export const modelRouteToProto = (r: ModelRouteDoc) => ({
  id: r._id,
  organizationId: r.organizationId,
  name: r.name,
  strategy: r.strategy,
  targets: r.targets,
  retryOn: r.retryOn,
  attemptTimeoutMs: r.attemptTimeoutMs !== null ? BigInt(r.attemptTimeoutMs) : undefined,
  createdAt: timestampFromDate(r.createdAt),
  updatedAt: timestampFromDate(r.updatedAt),
});

const routeAnswer = (r: ModelRouteDoc) => ({ route: modelRouteToProto(r) });
const targetsOf = (targets: readonly ModelRouteTarget[]) =>
  targets.map((t) => (t.weight !== undefined ? { model: t.model, weight: t.weight } : { model: t.model }));

/** The ModelRouteService of the execution process (docs/providers.md "Routes"). */
export function registerModelRouteRpc(router: ConnectRouter, routes: ModelRoutes): void {
  router.service(ModelRouteService, {
    createModelRoute: withPrincipal(async (p, req) =>
      routeAnswer(
        await routes.create(p, {
          organizationId: req.organizationId,
          name: req.name,
          strategy: req.strategy,
          targets: targetsOf(req.targets),
          ...(req.retryOn ? { retryOn: req.retryOn.kinds } : {}),
          ...(req.attemptTimeoutMs !== undefined ? { attemptTimeoutMs: Number(req.attemptTimeoutMs) } : {}),
        }),
      ),
    ),
    getModelRoute: withPrincipal(async (p, req) => routeAnswer(await routes.get(p, req.id))),
    listModelRoutes: withPrincipal(async (p, req) => {
      const page = await routes.list(p, req);
      return { routes: page.items.map(modelRouteToProto), nextCursor: page.nextCursor };
    }),
    updateModelRoute: withPrincipal(async (p, req) =>
      routeAnswer(
        await routes.update(p, req.id, {
          ...(req.name !== undefined ? { name: req.name } : {}),
          ...(req.strategy !== undefined ? { strategy: req.strategy } : {}),
          ...(req.setTargets ? { targets: targetsOf(req.targets) } : {}),
          ...(req.retryOn ? { retryOn: req.retryOn.kinds } : {}),
          ...(req.clearAttemptTimeout
            ? { attemptTimeoutMs: null }
            : req.attemptTimeoutMs !== undefined
              ? { attemptTimeoutMs: Number(req.attemptTimeoutMs) }
              : {}),
        }),
      ),
    ),
    deleteModelRoute: withPrincipal(async (p, req) => routeAnswer(await routes.delete(p, req.id))),
  });
}
