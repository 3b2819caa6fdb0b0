import { alreadyExists, failedPrecondition, notFound, permissionDenied } from "@kiln/kit/errors";
import { isDuplicateKeyError } from "@kiln/kit/store";
import {
  checkRole,
  Issues,
  normalizeEmail,
  permissionsOf,
  type Role,
  roleChangeRefusal,
  roleRank,
} from "../domain/rules.js";
import type { MembershipDoc, UserDoc } from "../store/identity-store.js";
import type { Access } from "./access.js";

const LAST_OWNER = "an organization keeps at least one owner: make another member an owner first";

/**
 * Members of an organization: adding a signed-up user, changing a role, removing a member
 * (owners and admins; only owners touch owners), and joining by invitation. An organization always
 * keeps an owner (api.md "Members").
 */
export function memberUseCases(access: Access) {
  const { c, now, memberAccess, managedOrganization, requireRole } = access;

  const membershipId = (organizationId: string, userId: string) => `${organizationId}:${userId}`;

  /** Inserts the membership; already_exists when the user is a member already. */
  async function join(organizationId: string, user: UserDoc, role: Role): Promise<MembershipDoc> {
    const membership: MembershipDoc = {
      _id: membershipId(organizationId, user._id),
      organizationId,
      userId: user._id,
      role,
      permissions: permissionsOf(role),
      createdAt: now(),
    };
    try {
      await c.memberships.insertOne(membership);
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
      throw alreadyExists(`${user.email} is already a member`, [{ field: "email", issue: "is already a member" }]);
    }
    return membership;
  }

  /** The member `userId` of the organization, with the caller's own membership; 404 for a non-member. */
  async function target(callerId: string, organizationId: string, userId: string, what: string) {
    const { membership: mine } = await (callerId === userId
      ? memberAccess(callerId, organizationId)
      : managedOrganization(callerId, organizationId, what));
    const theirs =
      callerId === userId ? mine : await c.memberships.findOne({ _id: membershipId(organizationId, userId) });
    if (!theirs) throw notFound("member");
    return { mine, theirs };
  }

  /**
   * After a write that took the owner role away from `before`: when no owner is left (two owners
   * demoted each other at once), the write is undone and refused.
   */
  async function keepAnOwner(before: MembershipDoc, undo: () => Promise<unknown>) {
    if (before.role !== "owner") return;
    if ((await c.memberships.countDocuments({ organizationId: before.organizationId, role: "owner" })) > 0) return;
    await undo();
    throw failedPrecondition(LAST_OWNER);
  }

  async function refuseLastOwner(member: MembershipDoc) {
    if (member.role !== "owner") return;
    const owners = await c.memberships.countDocuments({ organizationId: member.organizationId, role: "owner" });
    if (owners <= 1) throw failedPrecondition(LAST_OWNER);
  }

  return {
    join,

    /** Adds a signed-up user; owners and admins add members and admins, only owners add owners. */
    async addMember(userId: string, input: { organizationId: string; email: string; role: string }) {
      const issues = new Issues();
      const email = normalizeEmail(issues, input.email);
      const role = checkRole(issues, input.role);
      issues.throwIfAny();
      const { membership: mine } = await managedOrganization(userId, input.organizationId, "add members");
      const refusal = roleChangeRefusal(mine.role, null, role);
      if (refusal) throw permissionDenied(refusal);
      await requireRole(input.organizationId, role);
      const user = await c.users.findOne({ email });
      if (!user) throw notFound("user (they sign up first, or invite them)");
      return { membership: await join(input.organizationId, user, role), user };
    },

    /**
     * A member's new role. Managers change others' roles within their own rank; anyone may lower
     * their own role, never raise it; the last owner stays an owner.
     */
    async changeMemberRole(callerId: string, input: { organizationId: string; userId: string; role: string }) {
      const issues = new Issues();
      const role = checkRole(issues, input.role);
      issues.throwIfAny();
      const { mine, theirs } = await target(callerId, input.organizationId, input.userId, "change roles");
      // A custom role is no raise in rank, yet may grant what the caller's role does not: only managers give it.
      const raising =
        roleRank(role) > roleRank(mine.role) || (roleRank(mine.role) === 0 && role !== mine.role && role !== "viewer");
      if (theirs === mine && raising) throw permissionDenied("you cannot raise your own role");
      const refusal = theirs === mine ? undefined : roleChangeRefusal(mine.role, theirs.role, role);
      if (refusal) throw permissionDenied(refusal);
      await requireRole(input.organizationId, role);
      const user = await c.users.findOne({ _id: theirs.userId });
      if (!user) throw notFound("member");
      if (theirs.role === role) return { membership: theirs, user };
      if (role !== "owner") await refuseLastOwner(theirs);
      const changed = await c.memberships.findOneAndUpdate(
        { _id: theirs._id },
        { $set: { role, permissions: permissionsOf(role) } },
        { returnDocument: "after" },
      );
      if (!changed) throw notFound("member");
      await keepAnOwner(theirs, () =>
        c.memberships.updateOne({ _id: theirs._id }, { $set: { role: theirs.role, permissions: theirs.permissions } }),
      );
      return { membership: changed, user };
    },

    /**
     * Removes a member (owners and admins; owners remove owners), or the caller leaves. Their access
     * ends at once where identity answers, and within the services' authorization cache TTL
     * elsewhere (api.md "Members"). An organization they onboarded is no longer "theirs": onboarding
     * again makes them a new one.
     */
    async removeMember(callerId: string, input: { organizationId: string; userId: string }) {
      const { mine, theirs } = await target(callerId, input.organizationId, input.userId, "remove members");
      const refusal = theirs === mine ? undefined : roleChangeRefusal(mine.role, theirs.role, null);
      if (refusal) throw permissionDenied(refusal);
      await refuseLastOwner(theirs);
      const user = await c.users.findOne({ _id: theirs.userId });
      if (!user) throw notFound("member");
      // The onboarding record first: were it left behind, onboarding again would restore the
      // membership (completeOnboarding finishes what its record names).
      await c.onboardings.deleteOne({ _id: theirs.userId, organizationId: theirs.organizationId });
      await c.memberships.deleteOne({ _id: theirs._id });
      await keepAnOwner(theirs, () => c.memberships.insertOne(theirs));
      return { membership: theirs, user };
    },
  };
}
