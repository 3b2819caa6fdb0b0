import type { Collection, Store } from "@kiln/kit/store";
import type { Role } from "../domain/rules.js";

/** A per-organization SCIM bearer token; `_id` is `sct_<hex>`, the token's middle part. */
export interface ScimTokenDoc {
  _id: string;
  organizationId: string;
  name: string;
  /** SHA-256 of the secret; the token itself is never stored. */
  secretHash: string;
  createdByUserId: string;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface ScimEmailDoc {
  value: string;
  type: string;
  primary: boolean;
}

/**
 * A user as an organization's identity provider provisioned it: `_id` is `<organizationId>:<userId>`,
 * so a user is provisioned at most once per organization; `userNameKey` (lower-cased) is unique in it.
 */
export interface ScimUserDoc {
  _id: string;
  organizationId: string;
  userId: string;
  userName: string;
  userNameKey: string;
  externalId: string;
  active: boolean;
  displayName: string;
  givenName: string;
  familyName: string;
  emails: ScimEmailDoc[];
  /** Lower-cased e-mail values, for the `emails.value eq` filter. */
  emailKeys: string[];
  /** The role given back on reactivation when it was `owner` (SCIM never gives that role itself). */
  roleBeforeDeactivation: Role | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A SCIM group of an organization; `displayNameKey` (lower-cased) is unique in it. */
export interface ScimGroupDoc {
  _id: string;
  organizationId: string;
  displayName: string;
  displayNameKey: string;
  externalId: string;
  /** User ids of provisioned users of the same organization. */
  memberIds: string[];
  createdAt: Date;
  updatedAt: Date;
}

export interface ScimCollections {
  scimTokens: Collection<ScimTokenDoc>;
  scimUsers: Collection<ScimUserDoc>;
  scimGroups: Collection<ScimGroupDoc>;
}

export function scimCollections(store: Store): ScimCollections {
  return {
    scimTokens: store.collection("scim_tokens"),
    scimUsers: store.collection("scim_users"),
    scimGroups: store.collection("scim_groups"),
  };
}

export async function ensureScimIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("scim_tokens", [{ keys: { organizationId: 1, _id: -1 } }]);
  await store.ensureIndexes("scim_users", [
    { keys: { organizationId: 1, userNameKey: 1 }, unique: true },
    { keys: { organizationId: 1, createdAt: 1 } },
    // An OIDC subject's first sign-in looks for the user provisioned with its address.
    { keys: { userId: 1 } },
  ]);
  await store.ensureIndexes("scim_groups", [
    { keys: { organizationId: 1, displayNameKey: 1 }, unique: true },
    { keys: { organizationId: 1, memberIds: 1 } },
  ]);
}
