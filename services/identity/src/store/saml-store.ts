import type { Collection, Store } from "@kiln/kit/store";
import type { CheckedSamlSettings } from "../domain/saml-settings.js";

/** An organization's SAML settings (docs/security.md "SAML sign-in"); `_id` is the organization's id. */
export interface SamlSettingsDoc extends CheckedSamlSettings {
  _id: string;
  organizationId: string;
  updatedAt: Date;
  updatedByUserId: string;
}

/** An SP-initiated sign-in under way; `_id` is the opaque RelayState (`sst_…`), taken back once. */
export interface SamlRequestDoc {
  _id: string;
  organizationId: string;
  /** The AuthnRequest's ID, which the response's InResponseTo must name. */
  requestId: string;
  returnTo: string;
  createdAt: Date;
  expiresAt: Date;
}

/** An assertion already used; `_id` is `<organizationId>:<assertion ID>`, kept until it expires. */
export interface SamlAssertionDoc {
  _id: string;
  organizationId: string;
  expiresAt: Date;
}

export interface SamlCollections {
  samlSettings: Collection<SamlSettingsDoc>;
  samlRequests: Collection<SamlRequestDoc>;
  samlAssertions: Collection<SamlAssertionDoc>;
}

export function samlCollections(store: Store): SamlCollections {
  return {
    samlSettings: store.collection("saml_settings"),
    samlRequests: store.collection("saml_requests"),
    samlAssertions: store.collection("saml_assertions"),
  };
}

export async function ensureSamlIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("saml_requests", [{ keys: { expiresAt: 1 } }]);
  await store.ensureIndexes("saml_assertions", [{ keys: { expiresAt: 1 } }]);
}
