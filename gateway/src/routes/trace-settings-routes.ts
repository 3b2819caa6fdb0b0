import type { TraceSettings } from "@kiln/proto/traces";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { ACCESS_TOKEN_ONLY, answers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { Body, Nullable, Timestamp } from "../schemas.js";
import { OrganizationId, organizationOf } from "./catalog-requests.js";
import { iso } from "./views.js";

const op = operations({ tags: ["traces"], stability: "beta" });
/** A change of retention is a signed-in owner's or admin's: an API key cannot change how long its own traces are kept. */
const userOp = operations({ tags: ["traces"], stability: "beta", security: ACCESS_TOKEN_ONLY });

export const TraceSettingsView = Type.Object(
  {
    organizationId: Type.String(),
    retentionDays: Type.Integer({
      minimum: 1,
      maximum: 400,
      description: "days a stored span and trace are kept; 30 until changed",
    }),
    updatedAt: Nullable(Timestamp, { description: "null until the settings were first changed" }),
  },
  { $id: "TraceSettings", description: 'An organization\'s trace settings (docs/observability.md "Retention")' },
);

const traceSettingsView = (s: TraceSettings | undefined) => ({
  organizationId: s?.organizationId ?? "",
  retentionDays: s?.retentionDays ?? 0,
  updatedAt: iso(s?.updatedAt),
});

const Query = Type.Object({ organizationId: Type.Optional(OrganizationId) });

/** An organization's trace retention (docs/observability.md "Retention"): read by members, changed by owners and admins. */
export function registerTraceSettingsRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { traces } = deps.clients;

  app.get(
    "/api/traces/settings",
    op("getTraceSettings", "An organization's trace settings: how long its traces are kept", {
      querystring: Query,
      response: answers(TraceSettingsView, 400, 401, 403, 404),
    }),
    async (request) =>
      traceSettingsView(
        (
          await traces.getTraceSettings(
            { organizationId: organizationOf(request, request.query.organizationId) },
            rpcOptions(request),
          )
        ).settings,
      ),
  );

  app.put(
    "/api/traces/settings",
    userOp(
      "updateTraceSettings",
      "Change how long an organization's traces are kept (owners and admins; applies to traces stored afterwards)",
      {
        querystring: Query,
        body: Body({
          retentionDays: Type.Integer({ minimum: 1, maximum: 400, description: "days spans and traces are kept" }),
        }),
        response: answers(TraceSettingsView, 400, 401, 403, 404),
      },
    ),
    async (request) =>
      traceSettingsView(
        (
          await traces.updateTraceSettings(
            {
              organizationId: organizationOf(request, request.query.organizationId),
              retentionDays: request.body.retentionDays,
            },
            rpcOptions(request),
          )
        ).settings,
      ),
  );
}
