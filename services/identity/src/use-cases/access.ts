import { invalidArgument, notFound, permissionDenied, unauthenticated } from "@kiln/kit/errors";
import { isOutside, type Principal } from "@kiln/kit/principal";
import { isDuplicateKeyError } from "@kiln/kit/store";
import { builtInScopes } from "../domain/roles.js";
import { freePlanOf, isBuiltInRole, ROLE_PERMISSIONS, type Role } from "../domain/rules.js";
import type { TokenIssuer } from "../domain/token-issuer.js";
import type { ApiKeyDoc, IdentityCollections, MembershipDoc, UserDoc } from "../store/identity-store.js";

export interface IdentityDeps {
  collections: IdentityCollections;
  issuer: TokenIssuer;
  /** The Free plan's monthly run limit for new organizations (FREE_PLAN_MONTHLY_RUN_LIMIT); default 1,000. */
  freePlanMonthlyRunLimit?: number;
  now?: () => Date;
}

export async function ignoreDuplicate(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (e) {
    if (!isDuplicateKeyError(e)) throw e;
  }
}

export type Access = ReturnType<typeof createAccess>;

/**
 * The reads every identity use case starts from: who the caller is, which organization they may
 * see or manage, and whether an API key still works.
 */
export function createAccess(deps: IdentityDeps) {
  const c = deps.collections;
  const now = deps.now ?? (() => new Date());
  const freePlan = freePlanOf(deps.freePlanMonthlyRunLimit);

  async function getUser(userId: string): Promise<UserDoc> {
    const user = await c.users.findOne({ _id: userId });
    if (!user) throw unauthenticated("unknown user");
    return user;
  }

  async function membershipOf(organizationId: string, userId: string): Promise<MembershipDoc | null> {
    return c.memberships.findOne({ _id: `${organizationId}:${userId}` });
  }

  /** Org and membership, or not_found for both a missing org and a non-member (no leak). */
  async function memberAccess(userId: string, organizationId: string) {
    const [organization, membership] = await Promise.all([
      c.organizations.findOne({ _id: organizationId }),
      membershipOf(organizationId, userId),
    ]);
    if (!organization || !membership) throw notFound("organization");
    return { organization, membership };
  }

  /**
   * Refuses a user whose role does not grant `scope` (docs/security.md "Roles"): a viewer's reads
   * only, a custom role's scopes; a custom role deleted meanwhile grants nothing.
   */
  async function requireRoleScope(membership: MembershipDoc, scope: string): Promise<void> {
    if (!scope) return;
    const scopes = isBuiltInRole(membership.role)
      ? builtInScopes(membership.role)
      : ((await c.roles.findOne({ _id: `${membership.organizationId}:${membership.role}` }))?.scopes ?? []);
    if (scopes !== null && !scopes.includes(scope)) {
      throw permissionDenied(`your role ${membership.role} does not have the permission ${scope} in this organization`);
    }
  }

  /** A role the organization cannot give (a custom role's name no one created) is a 400 on `role`. */
  async function requireRole(organizationId: string, role: Role): Promise<void> {
    if (isBuiltInRole(role) || (await c.roles.findOne({ _id: `${organizationId}:${role}` }))) return;
    throw invalidArgument("unknown role", [{ field: "role", issue: `${role} is not a role of the organization` }]);
  }

  async function activeKey(keyId: string): Promise<ApiKeyDoc> {
    const key = await c.apiKeys.findOne({ _id: keyId });
    if (!key || key.revokedAt) throw unauthenticated("invalid API key");
    return key;
  }

  async function manageableKeyOrg(userId: string, organizationId: string) {
    const { organization, membership } = await memberAccess(userId, organizationId);
    if (membership.role !== "owner" && membership.role !== "admin") {
      throw permissionDenied("only organization owners and admins manage API keys");
    }
    return organization;
  }

  async function managedOrganization(userId: string, organizationId: string, what: string) {
    const access = await memberAccess(userId, organizationId);
    if (access.membership.role !== "owner" && access.membership.role !== "admin") {
      throw permissionDenied(`only organization owners and admins ${what}`);
    }
    return access;
  }

  /** Members (any role) see their organization; an API key sees its own. */
  async function visibleOrganization(principal: Principal, organizationId: string) {
    if (principal.type === "user") return memberAccess(principal.id, organizationId);
    if (principal.type === "api_key") await activeKey(principal.id);
    const organization = await c.organizations.findOne({ _id: organizationId });
    if (!organization || isOutside(principal, organizationId)) throw notFound("organization");
    return { organization, membership: null };
  }

  /**
   * The organization `orgId` on the Free plan with `userId` as its owner. Idempotent; a concurrent
   * call that created the same document first is not an error.
   */
  async function ensureOrganization(orgId: string, name: string, userId: string, at: Date) {
    await ignoreDuplicate(() =>
      c.organizations.updateOne(
        { _id: orgId },
        { $setOnInsert: { name, ...freePlan, createdAt: at, updatedAt: at } },
        { upsert: true },
      ),
    );
    await ignoreDuplicate(() =>
      c.memberships.updateOne(
        { _id: `${orgId}:${userId}` },
        {
          $setOnInsert: {
            organizationId: orgId,
            userId,
            role: "owner",
            permissions: [...ROLE_PERMISSIONS.owner],
            createdAt: at,
          },
        },
        { upsert: true },
      ),
    );
  }

  return {
    c,
    ensureOrganization,
    now,
    issuer: deps.issuer,
    getUser,
    membershipOf,
    memberAccess,
    requireRoleScope,
    requireRole,
    activeKey,
    manageableKeyOrg,
    managedOrganization,
    visibleOrganization,
  };
}
