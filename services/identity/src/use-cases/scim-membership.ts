import { DomainError, failedPrecondition } from "@kiln/kit/errors";
import { permissionsOf, type Role } from "../domain/rules.js";
import { roleOfGroups } from "../domain/scim-roles.js";
import type { UserDoc } from "../store/identity-store.js";
import type { ScimUserDoc } from "../store/scim-store.js";
import type { Access } from "./access.js";

const LAST_OWNER = "an organization keeps at least one owner: the last one cannot be deactivated";

type Join = (organizationId: string, user: UserDoc, role: Role) => Promise<unknown>;

/**
 * What a provisioned user's state means for their membership (docs/scim.md "Deactivation"):
 * active, they are a member with the role their groups give; inactive or deleted, they are no
 * member at all, and the API keys they made in the organization are revoked.
 */
export function scimMembership(access: Access, join: Join) {
  const { c, now, membershipOf } = access;

  async function groupRole(organizationId: string, userId: string) {
    const groups = await c.scimGroups.find({ organizationId, memberIds: userId });
    return roleOfGroups(groups.map((g) => g.displayName));
  }

  /** An active user joins (or keeps) the organization; an owner keeps the owner role. */
  async function admit(doc: ScimUserDoc): Promise<void> {
    const role = doc.roleBeforeDeactivation === "owner" ? "owner" : await groupRole(doc.organizationId, doc.userId);
    const existing = await membershipOf(doc.organizationId, doc.userId);
    if (existing) return syncRole(doc.organizationId, doc.userId);
    const user = await c.users.findOne({ _id: doc.userId });
    if (!user) return;
    try {
      await join(doc.organizationId, user, role);
    } catch (e) {
      // A member already (a concurrent call joined them first): nothing more to do.
      if (!(e instanceof DomainError && e.kind === "already_exists")) throw e;
    }
  }

  /**
   * Ends the user's access to the organization at once where identity answers: the membership goes
   * (the last owner stays, 409) and the keys they made are revoked. Answers the revoked keys' ids
   * and the role they had.
   */
  async function deactivate(organizationId: string, userId: string) {
    const membership = await membershipOf(organizationId, userId);
    if (membership?.role === "owner") {
      const owners = await c.memberships.countDocuments({ organizationId, role: "owner" });
      if (owners <= 1) throw failedPrecondition(LAST_OWNER);
    }
    if (membership) {
      await c.onboardings.deleteOne({ _id: userId, organizationId });
      await c.memberships.deleteOne({ _id: membership._id });
      // Two owners deactivated at once: the second finds no owner left, and is undone.
      if (
        membership.role === "owner" &&
        (await c.memberships.countDocuments({ organizationId, role: "owner" })) === 0
      ) {
        await c.memberships.insertOne(membership);
        throw failedPrecondition(LAST_OWNER);
      }
    }
    const keys = await c.apiKeys.find({ organizationId, createdByUserId: userId, revokedAt: null });
    if (keys.length > 0) {
      await c.apiKeys.updateMany(
        { _id: { $in: keys.map((k) => k._id) }, revokedAt: null },
        { $set: { revokedAt: now() } },
      );
    }
    return { revokedApiKeyIds: keys.map((k) => k._id), role: membership?.role ?? null };
  }

  /** A member's role after their groups changed; owners are left as they are. */
  async function syncRole(organizationId: string, userId: string): Promise<void> {
    const membership = await membershipOf(organizationId, userId);
    if (!membership || membership.role === "owner") return;
    const role = await groupRole(organizationId, userId);
    if (role === membership.role) return;
    await c.memberships.updateOne(
      { _id: membership._id, role: membership.role },
      { $set: { role, permissions: permissionsOf(role) } },
    );
  }

  return { admit, deactivate, syncRole };
}
