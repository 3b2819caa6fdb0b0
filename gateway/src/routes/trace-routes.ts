import Type from "typebox";
import { HttpError } from "../errors.js";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage, pageOf, timeFilterOf } from "../http/list-page.js";
import { answers, listAnswers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { ListQuery } from "../schemas.js";
import { OrganizationId, organizationOf } from "./catalog-requests.js";
import { registerOtlpRoutes } from "./otlp-routes.js";
import { registerTraceSettingsRoutes } from "./trace-settings-routes.js";
import {
  SessionDetailView,
  SessionView,
  sessionDetailView,
  sessionView,
  TraceDetailView,
  TraceStatus,
  TraceView,
  traceDetailView,
  traceView,
} from "./trace-views.js";

const op = operations({ tags: ["traces"], stability: "beta" });
const Filter = Type.String({ minLength: 1, maxLength: 256 });
const Time = Type.String({ format: "date-time" });
const TraceId = Type.String({ pattern: "^[0-9a-f]{32}$", description: "32 lowercase hex digits" });
const Usd = Type.String({ maxLength: 32, description: "US dollars, 0 or more, e.g. 0.05" });

/** A cost filter as the RPC takes it (unset: undefined); 400 naming `field` unless it is a number of dollars, 0 or more. */
function costFilterOf(field: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const usd = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(usd))
    throw new HttpError("invalid_argument", `invalid ${field}`, [
      { field, issue: "must be a number of US dollars, 0 or more" },
    ]);
  return usd;
}

/** Traces ingested over OTLP (docs/observability.md; issue #36): the OTLP endpoint, the list and one trace. */
export function registerTraceRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { traces } = deps.clients;
  registerOtlpRoutes(app, deps);
  registerTraceSettingsRoutes(app, deps);

  app.get(
    "/api/traces",
    op("listTraces", "An organization's traces, most recently ingested first", {
      querystring: Type.Object({
        organizationId: Type.Optional(OrganizationId),
        ...ListQuery,
        name: Type.Optional(Type.String({ ...Filter, description: "the root span's name" })),
        session: Type.Optional(Type.String({ ...Filter, description: "session.id or gen_ai.conversation.id" })),
        model: Type.Optional(Type.String({ ...Filter, description: "a generation's response (else request) model" })),
        status: Type.Optional(TraceStatus),
        from: Type.Optional(Type.String({ ...Time, description: "traces that started at or after" })),
        to: Type.Optional(Type.String({ ...Time, description: "traces that started before" })),
        user: Type.Optional(
          Type.String({ ...Filter, description: "user.id, enduser.id or ai.telemetry.metadata.userId" }),
        ),
        label: Type.Optional(Type.String({ ...Filter, description: "a Kiln run's label (kiln.run.label)" })),
        minCost: Type.Optional(
          Type.String({ ...Usd, description: "the trace's total cost is at least (unpriced never matches)" }),
        ),
        maxCost: Type.Optional(
          Type.String({ ...Usd, description: "the trace's total cost is at most (unpriced never matches)" }),
        ),
      }),
      response: listAnswers(TraceView, 400, 401, 403, 404),
    }),
    async (request) => {
      const q = request.query;
      const r = await traces.listTraces(
        {
          organizationId: organizationOf(request, q.organizationId),
          ...pageOf(q),
          name: q.name ?? "",
          sessionId: q.session ?? "",
          model: q.model ?? "",
          status: q.status ?? "",
          from: timeFilterOf("from", q.from),
          to: timeFilterOf("to", q.to),
          userId: q.user ?? "",
          label: q.label ?? "",
          minCostUsd: costFilterOf("minCost", q.minCost),
          maxCostUsd: costFilterOf("maxCost", q.maxCost),
        },
        rpcOptions(request),
      );
      return listPage(r.traces, traceView, r.nextCursor);
    },
  );

  app.get(
    "/api/traces/:traceId",
    op("getTrace", "A trace: its summary and every span, with the span tree and the generations", {
      params: Type.Object({ traceId: TraceId }),
      querystring: Type.Object({ organizationId: Type.Optional(OrganizationId) }),
      response: answers(TraceDetailView, 400, 401, 403, 404),
    }),
    async (request) => {
      const r = await traces.getTrace(
        { organizationId: organizationOf(request, request.query.organizationId), traceId: request.params.traceId },
        rpcOptions(request),
      );
      return traceDetailView(r);
    },
  );

  app.get(
    "/api/sessions",
    op("listSessions", "An organization's sessions (traces sharing a session id), latest activity first", {
      querystring: Type.Object({
        organizationId: Type.Optional(OrganizationId),
        ...ListQuery,
        user: Type.Optional(Type.String({ ...Filter, description: "sessions whose traces name this end user" })),
      }),
      response: listAnswers(SessionView, 400, 401, 403, 404),
    }),
    async (request) => {
      const q = request.query;
      const r = await traces.listSessions(
        { organizationId: organizationOf(request, q.organizationId), ...pageOf(q), userId: q.user ?? "" },
        rpcOptions(request),
      );
      return listPage(r.sessions, sessionView, r.nextCursor);
    },
  );

  app.get(
    "/api/sessions/:sessionId",
    op("getSession", "A session and its traces in start order, each with its input and output", {
      params: Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 256 }) }),
      querystring: Type.Object({ organizationId: Type.Optional(OrganizationId), ...ListQuery }),
      response: answers(SessionDetailView, 400, 401, 403, 404),
    }),
    async (request) => {
      const q = request.query;
      const r = await traces.getSession(
        {
          organizationId: organizationOf(request, q.organizationId),
          sessionId: request.params.sessionId,
          ...pageOf(q),
        },
        rpcOptions(request),
      );
      return sessionDetailView(r);
    },
  );
}
