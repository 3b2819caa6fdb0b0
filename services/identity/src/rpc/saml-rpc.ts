/** SamlService (proto/kiln/identity/v1/saml.proto): settings for owners and admins, sign-in for the gateway. */
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { type PutSamlSettingsRequest, SamlService } from "@kiln/proto/saml";
import type { Identity } from "../identity.js";
import type { SamlSettingsDoc } from "../store/saml-store.js";
import { requirePlatform, requireUser } from "./callers.js";

const settingsToProto = (s: SamlSettingsDoc) => ({
  organizationId: s.organizationId,
  enabled: s.enabled,
  idpEntityId: s.idpEntityId,
  idpSsoUrl: s.idpSsoUrl,
  certificateFingerprint: s.certificateFingerprint,
  certificateSubject: s.certificateSubject,
  certificateNotAfter: timestampFromDate(s.certificateNotAfter),
  roleAttribute: s.roleAttribute,
  roleMapping: Object.fromEntries(s.roleMapping.map((m) => [m.value, m.role])),
  defaultRole: s.defaultRole,
  allowIdpInitiated: s.allowIdpInitiated,
  updatedAt: timestampFromDate(s.updatedAt),
  updatedByUserId: s.updatedByUserId,
});

const settingsInput = (r: PutSamlSettingsRequest) => ({
  enabled: r.enabled,
  idpEntityId: r.idpEntityId,
  idpSsoUrl: r.idpSsoUrl,
  idpCertificate: r.idpCertificate,
  roleAttribute: r.roleAttribute,
  roleMapping: { ...r.roleMapping },
  defaultRole: r.defaultRole,
  allowIdpInitiated: r.allowIdpInitiated,
});

export function registerSamlRpc(router: ConnectRouter, identity: Identity): void {
  router.service(SamlService, {
    async putSamlSettings(req, ctx) {
      const doc = await identity.putSamlSettings(requireUser(ctx), req.organizationId, settingsInput(req));
      return { settings: settingsToProto(doc) };
    },
    async getSamlSettings(req, ctx) {
      return { settings: settingsToProto(await identity.getSamlSettings(requireUser(ctx), req.organizationId)) };
    },
    async deleteSamlSettings(req, ctx) {
      await identity.deleteSamlSettings(requireUser(ctx), req.organizationId);
      return {};
    },
    async getSamlProvider(req, ctx) {
      requirePlatform(ctx, "SAML sign-in calls are");
      const s = await identity.samlProvider(req.organizationId);
      return {
        idpEntityId: s.idpEntityId,
        idpSsoUrl: s.idpSsoUrl,
        idpCertificate: s.idpCertificate,
        allowIdpInitiated: s.allowIdpInitiated,
        roleAttribute: s.roleAttribute,
      };
    },
    async saveSamlRequest(req, ctx) {
      requirePlatform(ctx, "SAML sign-in calls are");
      return { state: await identity.saveSamlRequest(req) };
    },
    async takeSamlRequest(req, ctx) {
      requirePlatform(ctx, "SAML sign-in calls are");
      const doc = await identity.takeSamlRequest(req);
      return { requestId: doc.requestId, returnTo: doc.returnTo };
    },
    async completeSamlSignIn(req, ctx) {
      requirePlatform(ctx, "SAML sign-in calls are");
      const r = await identity.completeSamlSignIn({
        organizationId: req.organizationId,
        assertionId: req.assertionId,
        assertionExpiresAt: req.assertionExpiresAt ? timestampDate(req.assertionExpiresAt) : undefined,
        email: req.email,
        fullName: req.fullName,
        roleValues: req.roleValues,
      });
      return {
        userId: r.user._id,
        accessToken: r.accessToken,
        expiresAt: timestampFromDate(r.expiresAt),
        role: r.role,
        userCreated: r.created,
      };
    },
  });
}
