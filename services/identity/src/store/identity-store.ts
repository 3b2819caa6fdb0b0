import type { Collection, Store } from "@kiln/kit/store";
import type { Role } from "../domain/rules.js";
import { ensureSamlIndexes, type SamlCollections, samlCollections } from "./saml-store.js";
import { ensureScimIndexes, type ScimCollections, scimCollections } from "./scim-store.js";

export type { Role };

export interface UserDoc {
  _id: string;
  email: string;
  fullName: string;
  createdAt: Date;
  updatedAt: Date;
}

/** One per e-mail address of the built-in issuer; `_id` is the lower-cased address. */
export interface PasswordLoginDoc {
  _id: string;
  userId: string;
  passwordHash: string;
  createdAt: Date;
}

/** One per external OIDC subject, `_id` `<issuer> <subject>`; and per SAML NameID, `saml:<organizationId> <email>`. */
export interface ExternalLoginDoc {
  _id: string;
  userId: string;
  createdAt: Date;
}

export interface OrganizationDoc {
  _id: string;
  name: string;
  /** "free" from onboarding; the operator may name another (docs/operations.md "Plans"). */
  plan: string;
  entitlements: { aiEnabled: boolean; monthlyRunLimit: number };
  /** Absent on organizations created before settings existed: the defaults apply. */
  settings?: OrganizationSettings;
  createdAt: Date;
  updatedAt: Date;
}

export interface OrganizationSettings {
  /** Labels only owners and admins may move (docs/labels.md); default ["production"]. */
  protectedLabels: string[];
  /** Days the audit log keeps an entry (docs/governance.md "Retention"); absent: one year. */
  auditRetentionDays?: number;
}

/** `_id` is `<organizationId>:<userId>`, so a user is a member of an organization at most once. */
export interface MembershipDoc {
  _id: string;
  organizationId: string;
  userId: string;
  role: Role;
  permissions: string[];
  createdAt: Date;
}

/** The record that makes onboarding idempotent per user: `_id` is the user id. */
export interface OnboardingDoc {
  _id: string;
  organizationId: string;
  organizationName: string;
  createdAt: Date;
}

export interface ApiKeyDoc {
  _id: string;
  organizationId: string;
  name: string;
  scopes: string[];
  /** SHA-256 of the secret; the key itself is never stored. */
  secretHash: string;
  createdByUserId: string;
  createdAt: Date;
  revokedAt: Date | null;
  /** Tokens the key's runs may use per minute (docs/usage.md "Token-per-minute limits"); absent or null: no limit. */
  tokensPerMinute?: number | null;
}

/** An invitation to join an organization with a role; `_id` is `inv_<hex>`, the token's first part. */
/** A custom role of an organization (domain/roles.ts); `_id` is `<organizationId>:<name>`. */
export interface RoleDoc {
  _id: string;
  organizationId: string;
  name: string;
  description: string;
  /** The API-key scopes it grants. */
  scopes: string[];
  createdAt: Date;
  updatedAt: Date;
}

export interface InvitationDoc {
  _id: string;
  organizationId: string;
  /** Lower-cased; only the user with this address accepts it. */
  email: string;
  role: Role;
  /** SHA-256 of the token's secret; the token itself is never stored. */
  secretHash: string;
  createdByUserId: string;
  createdAt: Date;
  expiresAt: Date;
  acceptedAt: Date | null;
  acceptedByUserId: string | null;
  revokedAt: Date | null;
}

export interface IdentityCollections extends ScimCollections, SamlCollections {
  users: Collection<UserDoc>;
  passwordLogins: Collection<PasswordLoginDoc>;
  externalLogins: Collection<ExternalLoginDoc>;
  organizations: Collection<OrganizationDoc>;
  memberships: Collection<MembershipDoc>;
  onboardings: Collection<OnboardingDoc>;
  apiKeys: Collection<ApiKeyDoc>;
  invitations: Collection<InvitationDoc>;
  roles: Collection<RoleDoc>;
}

export function identityCollections(store: Store): IdentityCollections {
  return {
    users: store.collection("users"),
    passwordLogins: store.collection("password_logins"),
    externalLogins: store.collection("external_logins"),
    organizations: store.collection("organizations"),
    memberships: store.collection("memberships"),
    onboardings: store.collection("onboardings"),
    apiKeys: store.collection("api_keys"),
    invitations: store.collection("invitations"),
    roles: store.collection("roles"),
    ...scimCollections(store),
    ...samlCollections(store),
  };
}

export async function ensureIdentityIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("memberships", [
    { keys: { userId: 1, createdAt: 1 } },
    { keys: { organizationId: 1, _id: -1 } },
    { keys: { organizationId: 1, role: 1 } },
  ]);
  await store.ensureIndexes("api_keys", [{ keys: { organizationId: 1, _id: -1 } }]);
  await store.ensureIndexes("invitations", [{ keys: { organizationId: 1, _id: -1 } }]);
  await store.ensureIndexes("roles", [{ keys: { organizationId: 1, _id: 1 } }]);
  await ensureScimIndexes(store);
  await ensureSamlIndexes(store);
}
