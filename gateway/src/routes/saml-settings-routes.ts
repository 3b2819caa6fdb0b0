import type { SamlSettings } from "@kiln/proto/saml";
import type { FastifyRequest } from "fastify";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { ACCESS_TOKEN_ONLY, answers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { EMAIL_NAME_ID, spUrlsOf } from "../saml/saml-sp.js";
import { Body, errorResponses, IdParams, Nullable, OneOf, Timestamp } from "../schemas.js";
import { iso } from "./views.js";

/** An organization's SAML settings (docs/api.md "SAML sign-in"): owners and admins, access tokens only. */

const MappedRole = OneOf(["admin", "member", "viewer"] as const);

export const SamlSettingsView = Type.Object(
  {
    organizationId: Type.String(),
    enabled: Type.Boolean(),
    idpEntityId: Type.String(),
    idpSsoUrl: Type.String(),
    certificate: Type.Object(
      {
        fingerprintSha256: Type.String({ description: "colon-separated hex, as Okta and Entra show it" }),
        subject: Type.String(),
        notAfter: Timestamp,
      },
      { description: "the IdP's signing certificate, described (the PEM is not answered)" },
    ),
    roleAttribute: Nullable(Type.String()),
    roleMapping: Type.Record(Type.String(), MappedRole),
    defaultRole: MappedRole,
    allowIdpInitiated: Type.Boolean(),
    serviceProvider: Type.Object(
      {
        entityId: Type.String(),
        acsUrl: Type.String(),
        metadataUrl: Type.String(),
        nameIdFormat: Type.String(),
      },
      { description: "what to enter at the IdP (from the address this request reached the gateway at)" },
    ),
    updatedAt: Timestamp,
    updatedByUserId: Type.String(),
  },
  { $id: "SamlSettings", description: "an organization's SAML 2.0 sign-in (docs/security.md)" },
);

/** The origin the browser reaches the gateway at, which the SP's URLs are made of. */
export const originOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

const settingsView = (s: SamlSettings | undefined, request: FastifyRequest) => {
  const sp = spUrlsOf(originOf(request), s?.organizationId ?? "");
  return {
    organizationId: s?.organizationId ?? "",
    enabled: s?.enabled ?? false,
    idpEntityId: s?.idpEntityId ?? "",
    idpSsoUrl: s?.idpSsoUrl ?? "",
    certificate: {
      fingerprintSha256: s?.certificateFingerprint ?? "",
      subject: s?.certificateSubject ?? "",
      notAfter: iso(s?.certificateNotAfter) ?? "",
    },
    roleAttribute: s?.roleAttribute || null,
    roleMapping: { ...(s?.roleMapping ?? {}) } as Record<string, "admin" | "member" | "viewer">,
    defaultRole: (s?.defaultRole ?? "member") as "admin" | "member" | "viewer",
    allowIdpInitiated: s?.allowIdpInitiated ?? false,
    serviceProvider: { ...sp, nameIdFormat: EMAIL_NAME_ID },
    updatedAt: iso(s?.updatedAt) ?? "",
    updatedByUserId: s?.updatedByUserId ?? "",
  };
};

const SettingsBody = Body({
  enabled: Type.Boolean(),
  idpEntityId: Type.String({
    minLength: 1,
    maxLength: 1000,
    description: "the IdP's issuer (Okta: Issuer; Entra: Microsoft Entra Identifier)",
  }),
  idpSsoUrl: Type.String({
    minLength: 1,
    maxLength: 2000,
    description: "https (http only for 127.0.0.1, localhost or [::1]); Okta: Sign on URL; Entra: Login URL",
  }),
  idpCertificate: Type.String({ minLength: 1, maxLength: 16_384, description: "the IdP's signing certificate, PEM" }),
  roleAttribute: Type.Optional(
    Type.String({ maxLength: 256, description: "the attribute whose values give the role" }),
  ),
  roleMapping: Type.Optional(
    Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.String({ maxLength: 20 }), {
      maxProperties: 100,
      description: 'attribute value → "admin", "member" or "viewer"; the highest role of the values wins',
    }),
  ),
  defaultRole: Type.Optional(Type.String({ maxLength: 20, description: '"member" (default) or "admin"' })),
  allowIdpInitiated: Type.Optional(Type.Boolean({ description: "accept unsolicited responses (default false)" })),
});

const op = operations({ tags: ["organizations"], stability: "non-public", security: ACCESS_TOKEN_ONLY });

export function registerSamlSettingsRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { saml } = deps.clients;

  app.put(
    "/api/organizations/:id/saml",
    op("putSamlSettings", "Set the organization's SAML sign-in (replaces the settings whole)", {
      params: IdParams,
      body: SettingsBody,
      response: answers(SamlSettingsView, 400, 401, 403, 404),
    }),
    async (request) => {
      const b = request.body;
      const r = await saml.putSamlSettings(
        {
          organizationId: request.params.id,
          enabled: b.enabled,
          idpEntityId: b.idpEntityId,
          idpSsoUrl: b.idpSsoUrl,
          idpCertificate: b.idpCertificate,
          roleAttribute: b.roleAttribute ?? "",
          roleMapping: b.roleMapping ?? {},
          defaultRole: b.defaultRole ?? "",
          allowIdpInitiated: b.allowIdpInitiated ?? false,
        },
        rpcOptions(request),
      );
      return settingsView(r.settings, request);
    },
  );

  app.get(
    "/api/organizations/:id/saml",
    op("getSamlSettings", "The organization's SAML sign-in, with what to enter at the IdP", {
      params: IdParams,
      response: answers(SamlSettingsView, 401, 403, 404),
    }),
    async (request) =>
      settingsView(
        (await saml.getSamlSettings({ organizationId: request.params.id }, rpcOptions(request))).settings,
        request,
      ),
  );

  app.delete(
    "/api/organizations/:id/saml",
    op("deleteSamlSettings", "Remove the organization's SAML sign-in", {
      params: IdParams,
      response: { 200: Type.Object({ deleted: Type.Literal(true) }), ...errorResponses(401, 403, 404) },
    }),
    async (request) => {
      await saml.deleteSamlSettings({ organizationId: request.params.id }, rpcOptions(request));
      return { deleted: true as const };
    },
  );
}
