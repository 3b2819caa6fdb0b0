import { DEFAULT_PROTECTED_LABELS, labelNameIssue } from "@kiln/contracts/labels";
import { alreadyExists, notFound, permissionDenied } from "@kiln/kit/errors";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { isDuplicateKeyError } from "@kiln/kit/store";
import { Issues, normalizeEmail, ROLE_PERMISSIONS } from "../domain/rules.js";
import type { MembershipDoc, OrganizationDoc, Role } from "../store/identity-store.js";
import type { Access } from "./access.js";

/** The settings in force: an organization created before settings existed has the defaults. */
export function settingsOf(organization: OrganizationDoc) {
  return { protectedLabels: organization.settings?.protectedLabels ?? [...DEFAULT_PROTECTED_LABELS] };
}

const ROLES: readonly Role[] = ["owner", "admin", "member"];
const MAX_PROTECTED_LABELS = 20;

/** Organizations and their members: reading, settings, adding and listing members. */
export function organizationUseCases(access: Access) {
  const { c, now, memberAccess, managedOrganization, visibleOrganization } = access;

  async function withUsers(memberships: MembershipDoc[]) {
    const users = memberships.length > 0 ? await c.users.find({ _id: { $in: memberships.map((m) => m.userId) } }) : [];
    const byId = new Map(users.map((u) => [u._id, u]));
    return memberships.flatMap((membership) => {
      const user = byId.get(membership.userId);
      return user ? [{ membership, user }] : [];
    });
  }

  return {
    async getOrganization(principal: Principal, organizationId: string) {
      if (organizationId === "") throw notFound("organization");
      return visibleOrganization(principal, organizationId);
    },

    /** Name and settings; owners and admins only. */
    async updateOrganization(
      userId: string,
      input: { organizationId: string; name?: string; protectedLabels?: string[] },
    ): Promise<OrganizationDoc> {
      const issues = new Issues();
      const set: Record<string, unknown> = {};
      if (input.name !== undefined) set.name = issues.text("name", input.name);
      if (input.protectedLabels !== undefined) {
        if (input.protectedLabels.length > MAX_PROTECTED_LABELS)
          issues.add("settings.protectedLabels", `must hold at most ${MAX_PROTECTED_LABELS} labels`);
        input.protectedLabels.forEach((label, i) => {
          const issue = labelNameIssue(label);
          if (issue) issues.add(`settings.protectedLabels[${i}]`, issue);
        });
        set["settings.protectedLabels"] = [...new Set(input.protectedLabels)];
      }
      issues.throwIfAny();
      const { organization } = await managedOrganization(userId, input.organizationId, "change its settings");
      if (Object.keys(set).length === 0) return organization;
      return (
        (await c.organizations.findOneAndUpdate(
          { _id: organization._id },
          { $set: { ...set, updatedAt: now() } },
          { returnDocument: "after" },
        )) ?? organization
      );
    },

    /** Adds a signed-up user; owners and admins add members and admins, only owners add owners. */
    async addMember(userId: string, input: { organizationId: string; email: string; role: string }) {
      const issues = new Issues();
      const email = normalizeEmail(issues, input.email);
      const role = input.role as Role;
      if (!ROLES.includes(role)) issues.add("role", 'must be "owner", "admin" or "member"');
      issues.throwIfAny();
      const { membership: mine } = await managedOrganization(userId, input.organizationId, "add members");
      if (role === "owner" && mine.role !== "owner") throw permissionDenied("only owners add owners");
      const user = await c.users.findOne({ email });
      if (!user) throw notFound("user (they sign up first)");
      const membership: MembershipDoc = {
        _id: `${input.organizationId}:${user._id}`,
        organizationId: input.organizationId,
        userId: user._id,
        role,
        permissions: [...ROLE_PERMISSIONS[role]],
        createdAt: now(),
      };
      try {
        await c.memberships.insertOne(membership);
      } catch (e) {
        if (!isDuplicateKeyError(e)) throw e;
        throw alreadyExists(`${email} is already a member`, [{ field: "email", issue: "is already a member" }]);
      }
      return { membership, user };
    },

    /** Members see who else is a member, with their roles. */
    async listMembers(principal: Principal, input: { organizationId: string; limit: number; cursor: string }) {
      if (principal.type !== "user") throw permissionDenied("this call needs a signed-in user");
      await memberAccess(principal.id, input.organizationId);
      const page = await findPage(c.memberships, { organizationId: input.organizationId }, input);
      return { items: await withUsers(page.items), nextCursor: page.nextCursor };
    },
  };
}
