/**
 * An organization's model routes (docs/providers.md "Routes"): create, read, list, change and
 * delete. Reads need `runs:read`, changes `runs:write` (API keys); users read as members and change
 * as owners or admins. Every query is scoped by the organization; a write drops the organization's
 * cached routes.
 */
import { authorizeOnResource, type IdentityAuth } from "@kiln/kit/authorizer";
import { alreadyExists, failedPrecondition, invalidArgument, notFound, permissionDenied } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { type Collection, isDuplicateKeyError } from "@kiln/kit/store";
import type { ProviderRegistry } from "@kiln/models/registry";
import type { RouteCache } from "./route-cache.js";
import { checkedRoute, type RouteFields } from "./route-rules.js";
import type { ModelRouteDoc } from "./route-store.js";

/** Routes an organization may have: each run that names one reads it by name. */
export const MAX_ROUTES_PER_ORGANIZATION = 100;

export interface ModelRoutesDeps {
  routes: Collection<ModelRouteDoc>;
  identityAuth: IdentityAuth;
  models: ProviderRegistry;
  cache: RouteCache;
  now: () => Date;
}

export type RouteChange = Partial<RouteFields>;

export type ModelRoutes = ReturnType<typeof createModelRoutes>;

export function createModelRoutes(deps: ModelRoutesDeps) {
  const { routes } = deps;

  async function authorize(principal: Principal, organizationId: string, write: boolean, what = "model route") {
    const decision = await authorizeOnResource(deps.identityAuth, principal, {
      organizationId,
      scope: write ? "runs:write" : "runs:read",
      what,
      requireAi: false,
    });
    if (write && principal.type === "user" && decision.role !== "owner" && decision.role !== "admin") {
      throw permissionDenied("only organization owners and admins manage model routes");
    }
  }

  /** The route with that id, once the caller may see it (404 otherwise, as for a route that is not there). */
  async function routeFor(principal: Principal, id: string, write: boolean): Promise<ModelRouteDoc> {
    const found = id === "" ? null : await routes.findOne({ _id: id });
    if (!found) throw notFound("model route");
    await authorize(principal, found.organizationId, write);
    return found;
  }

  const clash = (name: string) =>
    alreadyExists(`this organization already has a model route named "${name}"`, [
      { field: "name", issue: "is taken in this organization" },
    ]);

  return {
    async create(principal: Principal, input: RouteFields & { organizationId: string }): Promise<ModelRouteDoc> {
      if (input.organizationId === "")
        throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
      await authorize(principal, input.organizationId, true, "organization");
      const fields = checkedRoute(input, deps.models);
      const count = await routes.countDocuments({ organizationId: input.organizationId });
      if (count >= MAX_ROUTES_PER_ORGANIZATION) {
        throw failedPrecondition(`an organization has at most ${MAX_ROUTES_PER_ORGANIZATION} model routes`);
      }
      const at = deps.now();
      const doc: ModelRouteDoc = {
        _id: newId("mrt"),
        organizationId: input.organizationId,
        ...fields,
        createdAt: at,
        updatedAt: at,
      };
      try {
        await routes.insertOne(doc);
      } catch (e) {
        if (isDuplicateKeyError(e)) throw clash(doc.name);
        throw e;
      }
      deps.cache.invalidate(doc.organizationId);
      return doc;
    },

    get: (principal: Principal, id: string) => routeFor(principal, id, false),

    async list(principal: Principal, input: { organizationId: string; limit: number; cursor: string }) {
      if (input.organizationId === "")
        throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
      await authorize(principal, input.organizationId, false, "organization");
      return findPage(routes, { organizationId: input.organizationId }, input);
    },

    async update(principal: Principal, id: string, change: RouteChange): Promise<ModelRouteDoc> {
      const current = await routeFor(principal, id, true);
      const merged: RouteFields = {
        name: change.name ?? current.name,
        strategy: change.strategy ?? current.strategy,
        targets: change.targets ?? current.targets,
        retryOn: change.retryOn ?? current.retryOn,
        attemptTimeoutMs: change.attemptTimeoutMs === undefined ? current.attemptTimeoutMs : change.attemptTimeoutMs,
      };
      // Targets are checked again only when they change: a stored target that became unusable
      // is a failed attempt at run time, and does not block renaming the route.
      const fields = checkedRoute(merged, change.targets ? deps.models : null);
      const updated: ModelRouteDoc = { ...current, ...fields, updatedAt: deps.now() };
      try {
        await routes.replaceOne({ _id: current._id, organizationId: current.organizationId }, updated);
      } catch (e) {
        if (isDuplicateKeyError(e)) throw clash(updated.name);
        throw e;
      }
      deps.cache.invalidate(current.organizationId);
      return updated;
    },

    async delete(principal: Principal, id: string): Promise<ModelRouteDoc> {
      const current = await routeFor(principal, id, true);
      await routes.deleteOne({ _id: current._id, organizationId: current.organizationId });
      deps.cache.invalidate(current.organizationId);
      return current;
    },
  };
}
