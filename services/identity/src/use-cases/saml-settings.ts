import { notFound } from "@kiln/kit/errors";
import { checkSamlSettings, type SamlSettingsInput } from "../domain/saml-settings.js";
import type { SamlSettingsDoc } from "../store/saml-store.js";
import type { Access } from "./access.js";

/**
 * An organization's SAML settings (docs/security.md "SAML sign-in"): owners and admins save, read
 * and delete them; the gateway's SP endpoints read the IdP's part of enabled ones. Every read and
 * write is keyed by the organization.
 */
export function samlSettingsUseCases(access: Access) {
  const { c, now, managedOrganization } = access;
  const manage = (userId: string, organizationId: string) =>
    managedOrganization(userId, organizationId, "manage SAML sign-in");

  return {
    /** Replaces the settings whole (PUT). */
    async putSamlSettings(userId: string, organizationId: string, input: SamlSettingsInput) {
      const checked = checkSamlSettings(input, now());
      await manage(userId, organizationId);
      const doc: SamlSettingsDoc = {
        _id: organizationId,
        organizationId,
        ...checked,
        updatedAt: now(),
        updatedByUserId: userId,
      };
      await c.samlSettings.replaceOne({ _id: organizationId }, doc, { upsert: true });
      return doc;
    },

    async getSamlSettings(userId: string, organizationId: string) {
      await manage(userId, organizationId);
      const doc = await c.samlSettings.findOne({ _id: organizationId });
      if (!doc) throw notFound("SAML settings");
      return doc;
    },

    async deleteSamlSettings(userId: string, organizationId: string) {
      await manage(userId, organizationId);
      const r = await c.samlSettings.deleteOne({ _id: organizationId });
      if (r.deletedCount === 0) throw notFound("SAML settings");
    },

    /** The enabled settings of an organization, for the SP endpoints; not_found otherwise. */
    async samlProvider(organizationId: string): Promise<SamlSettingsDoc> {
      const doc = await c.samlSettings.findOne({ _id: organizationId });
      if (!doc?.enabled || !(await c.organizations.findOne({ _id: organizationId }))) {
        throw notFound("SAML sign-in for this organization");
      }
      return doc;
    },
  };
}
