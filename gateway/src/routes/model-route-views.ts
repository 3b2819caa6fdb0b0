/** The model route views (docs/providers.md "Routes") and their conversion from the execution service's messages. */
import type { ModelRoute } from "@kiln/proto/model-routes";
import Type from "typebox";
import { Nullable, OneOf, Timestamp } from "../schemas.js";
import { answersOf, iso } from "./views.js";

export const RETRY_KINDS = ["429", "5xx", "529", "timeout", "connection"] as const;

export const RouteName = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'a lower-case slug (a-z, 0-9, -), unique in the organization; runs name the route "route/<name>"',
});
export const RouteStrategy = OneOf(["fallback", "weighted"]);
export const RouteTarget = Type.Object(
  {
    model: Type.String({
      minLength: 1,
      maxLength: 200,
      description: "a model id this organization can run; not a route",
    }),
    weight: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1000,
        description: "a weighted route's share (default 1); unused by fallback",
      }),
    ),
  },
  { additionalProperties: false },
);
export const RouteTargets = Type.Array(RouteTarget, { minItems: 1, maxItems: 8 });
export const RetryOn = Type.Array(OneOf(RETRY_KINDS), {
  maxItems: RETRY_KINDS.length,
  uniqueItems: true,
  description: "the failures after which the route moves on to the next target; default all",
});
export const AttemptTimeoutMs = Type.Integer({ minimum: 1, maximum: 600_000, description: "bounds each attempt" });

export const ModelRouteView = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    name: Type.String(),
    strategy: RouteStrategy,
    targets: Type.Array(
      Type.Object({ model: Type.String(), weight: Type.Optional(Type.Integer()) }, { additionalProperties: false }),
    ),
    retryOn: Type.Array(OneOf(RETRY_KINDS)),
    attemptTimeoutMs: Nullable(Type.Integer(), { description: "null: each provider's own timeout" }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "ModelRoute", description: "an organization's named fallback or weighted list of models" },
);

const { view } = answersOf("execution");

export const modelRouteView = view("model route", (r: ModelRoute) => ({
  id: r.id,
  organizationId: r.organizationId,
  name: r.name,
  strategy: r.strategy as "fallback" | "weighted",
  targets: r.targets.map((t) => (t.weight !== undefined ? { model: t.model, weight: t.weight } : { model: t.model })),
  retryOn: r.retryOn as (typeof RETRY_KINDS)[number][],
  attemptTimeoutMs: r.attemptTimeoutMs !== undefined ? Number(r.attemptTimeoutMs) : null,
  createdAt: iso(r.createdAt) ?? "",
  updatedAt: iso(r.updatedAt) ?? "",
}));
