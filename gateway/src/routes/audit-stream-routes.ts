import type { AuditStream } from "@kiln/proto/audit";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { ACCESS_TOKEN_ONLY, answers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { Body, IdParams, Nullable, Timestamp } from "../schemas.js";
import { answersOf, iso } from "./views.js";
import { Url } from "./webhook-views.js";

/**
 * The organization's own audit webhook (docs/governance.md "Streaming to a webhook"): owners and
 * admins, access tokens only, as the organization's other settings.
 */

export const AuditStreamView = Type.Object(
  {
    organizationId: Type.String(),
    url: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    updatedByUserId: Type.String(),
    delivery: Type.Object(
      {
        acknowledgedSequence: Type.Integer({
          minimum: 0,
          description: "the last entry's sequence the receiver acknowledged (2xx); 0 before the first",
        }),
        acknowledgedAt: Nullable(Timestamp, { description: "when it acknowledged it" }),
        failures: Type.Integer({ minimum: 0, description: "failed sends in a row since then" }),
        retryAt: Nullable(Timestamp, { description: "when the failed page is sent again; null when none failed" }),
        lastError: Nullable(Type.String({ description: "the last failure in words (HTTP 503, a refused address)" })),
        lastErrorAt: Nullable(Timestamp),
      },
      { description: "how far the stream got, as its cursor holds it" },
    ),
  },
  { $id: "AuditStream", description: "never carries the signing secret" },
);

const Secret = Type.String({
  description: "whsec_…: the Standard Webhooks signing secret, shown this once (docs/governance.md)",
});

export const AuditStreamWithSecretView = Type.Object(
  { ...AuditStreamView.properties, secret: Type.Optional(Secret) },
  { $id: "AuditStreamWithSecret", description: "secret only when the call made it (the first set, a rotation)" },
);

export const AuditStreamSecretView = Type.Object(
  { ...AuditStreamView.properties, secret: Secret },
  { $id: "AuditStreamSecret", description: "a rotation's answer: the new secret, this once" },
);

const fromIdentity = answersOf("identity");

export const auditStreamView = fromIdentity.view("audit stream", (s: AuditStream) => {
  const d = s.delivery;
  return {
    organizationId: s.organizationId,
    url: s.url,
    createdAt: iso(s.createdAt) ?? "",
    updatedAt: iso(s.updatedAt) ?? "",
    updatedByUserId: s.updatedByUserId,
    delivery: {
      acknowledgedSequence: Number(d?.acknowledgedSequence ?? 0n),
      acknowledgedAt: iso(d?.acknowledgedAt),
      failures: d?.failures ?? 0,
      retryAt: iso(d?.retryAt),
      lastError: d?.lastError || null,
      lastErrorAt: iso(d?.lastErrorAt),
    },
  };
});

const op = operations({ tags: ["organizations"], stability: "non-public", security: ACCESS_TOKEN_ONLY });

export function registerAuditStreamRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { audit } = deps.clients;
  const path = "/api/organizations/:id/audit-stream";

  app.put(
    path,
    op("putAuditStream", "Stream the organization's audit log to a webhook; the secret is answered when it is made", {
      params: IdParams,
      body: Body({ url: Url }),
      response: answers(AuditStreamWithSecretView, 400, 401, 403, 404, 409),
    }),
    async (request) => {
      const r = await audit.putAuditStream(
        { organizationId: request.params.id, url: request.body.url },
        rpcOptions(request),
      );
      return { ...auditStreamView(r.stream), ...(r.secret && { secret: r.secret }) };
    },
  );

  app.get(
    path,
    op("getAuditStream", "The organization's audit webhook and how far it got (never its secret)", {
      params: IdParams,
      response: answers(AuditStreamView, 401, 403, 404),
    }),
    async (request) =>
      auditStreamView((await audit.getAuditStream({ organizationId: request.params.id }, rpcOptions(request))).stream),
  );

  app.delete(
    path,
    op("deleteAuditStream", "Stop streaming to the webhook; answers it as it was", {
      params: IdParams,
      response: answers(AuditStreamView, 401, 403, 404),
    }),
    async (request) =>
      auditStreamView(
        (await audit.deleteAuditStream({ organizationId: request.params.id }, rpcOptions(request))).stream,
      ),
  );

  app.post(
    `${path}/rotate-secret`,
    op("rotateAuditStreamSecret", "A new signing secret, answered once; the old one stops signing at once", {
      params: IdParams,
      response: answers(AuditStreamSecretView, 401, 403, 404, 409),
    }),
    async (request) => {
      const r = await audit.rotateAuditStreamSecret({ organizationId: request.params.id }, rpcOptions(request));
      return { ...auditStreamView(r.stream), secret: r.secret };
    },
  );
}
