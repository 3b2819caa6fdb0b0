import type { Collection, Store } from "@kiln/kit/store";
import type { RetryKind, RouteStrategy } from "@kiln/models/route-policy";

/** A stored model route (docs/providers.md "Routes"); `name` is unique per organization. */
export interface ModelRouteDoc {
  _id: string;
  organizationId: string;
  name: string;
  strategy: RouteStrategy;
  targets: { model: string; weight?: number }[];
  retryOn: RetryKind[];
  attemptTimeoutMs: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export function modelRouteCollection(store: Store): Collection<ModelRouteDoc> {
  return store.collection<ModelRouteDoc>("model_routes");
}

export async function ensureModelRouteIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("model_routes", [{ keys: { organizationId: 1, name: 1 }, unique: true }]);
}
