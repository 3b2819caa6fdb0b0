import { alreadyExists, failedPrecondition, notFound, permissionDenied } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { findPage } from "@kiln/kit/pagination";
import { secretMatches } from "../domain/api-keys.js";
import {
  generateInvitationToken,
  INVITATION_TTL_MS,
  type InvitationStatus,
  invitationStatus,
  parseInvitationToken,
} from "../domain/invitations.js";
import { checkRole, Issues, normalizeEmail, roleChangeRefusal } from "../domain/rules.js";
import type { InvitationDoc, UserDoc } from "../store/identity-store.js";
import type { Access } from "./access.js";
import type { memberUseCases } from "./members.js";

type Join = ReturnType<typeof memberUseCases>["join"];

const REFUSED: Record<Exclude<InvitationStatus, "pending">, string> = {
  accepted: "this invitation has already been used",
  revoked: "this invitation was revoked",
  expired: "this invitation has expired: ask for a new one",
};

/**
 * Invitations: owners and admins invite an e-mail address with a role; the person with that
 * address accepts the single-use token (signed in, or while signing up) and joins
 * (docs/security.md "Invitations").
 */
export function invitationUseCases(access: Access, join: Join) {
  const { c, now, getUser, managedOrganization } = access;

  /** The pending invitation a token stands for, for `email`; refused in words otherwise. */
  async function usable(token: string, email: string): Promise<InvitationDoc> {
    const parsed = parseInvitationToken(token);
    const invitation = parsed ? await c.invitations.findOne({ _id: parsed.invitationId }) : null;
    if (!parsed || !invitation || !secretMatches(parsed.secret, invitation.secretHash)) throw notFound("invitation");
    const status = invitationStatus(invitation, now());
    if (status !== "pending") throw failedPrecondition(REFUSED[status]);
    if (invitation.email !== email.trim().toLowerCase()) {
      throw permissionDenied("this invitation is for another e-mail address: sign in with the invited one");
    }
    return invitation;
  }

  async function accept(user: UserDoc, token: string) {
    const invitation = await usable(token, user.email);
    if (await access.membershipOf(invitation.organizationId, user._id)) {
      throw alreadyExists("you are already a member of this organization");
    }
    // Single use: only one acceptance claims it, even when two race.
    const at = now();
    const claimed = await c.invitations.findOneAndUpdate(
      { _id: invitation._id, acceptedAt: null, revokedAt: null, expiresAt: { $gt: at } },
      { $set: { acceptedAt: at, acceptedByUserId: user._id } },
      { returnDocument: "after" },
    );
    if (!claimed) throw failedPrecondition(REFUSED.accepted);
    try {
      const membership = await join(invitation.organizationId, user, invitation.role);
      const organization = await c.organizations.findOne({ _id: invitation.organizationId });
      if (!organization) throw notFound("organization");
      return { organization, membership };
    } catch (e) {
      // Nothing is lost: the invitation can be used again.
      await c.invitations.updateOne({ _id: invitation._id }, { $set: { acceptedAt: null, acceptedByUserId: null } });
      throw e;
    }
  }

  async function managedInvitation(userId: string, organizationId: string, id: string) {
    await managedOrganization(userId, organizationId, "manage invitations");
    const invitation = await c.invitations.findOne({ _id: id, organizationId });
    if (!invitation) throw notFound("invitation");
    return invitation;
  }

  return {
    /** Owners and admins invite members and admins; only owners invite owners. The token is returned once. */
    async createInvitation(userId: string, input: { organizationId: string; email: string; role: string }) {
      const issues = new Issues();
      const email = normalizeEmail(issues, input.email);
      const role = checkRole(issues, input.role);
      issues.throwIfAny();
      const { membership: mine } = await managedOrganization(userId, input.organizationId, "invite members");
      const refusal = roleChangeRefusal(mine.role, null, role);
      if (refusal) throw permissionDenied(refusal);
      await access.requireRole(input.organizationId, role);
      const existing = await c.users.findOne({ email });
      if (existing && (await access.membershipOf(input.organizationId, existing._id))) {
        throw alreadyExists(`${email} is already a member`, [{ field: "email", issue: "is already a member" }]);
      }
      const id = newId("inv");
      const { token, secretHash } = generateInvitationToken(id);
      const at = now();
      const invitation: InvitationDoc = {
        _id: id,
        organizationId: input.organizationId,
        email,
        role,
        secretHash,
        createdByUserId: userId,
        createdAt: at,
        expiresAt: new Date(at.getTime() + INVITATION_TTL_MS),
        acceptedAt: null,
        acceptedByUserId: null,
        revokedAt: null,
      };
      await c.invitations.insertOne(invitation);
      return { invitation, token };
    },

    /** The pending invitations (not accepted, revoked or expired), newest first; never their tokens. */
    async listInvitations(userId: string, input: { organizationId: string; limit: number; cursor: string }) {
      await managedOrganization(userId, input.organizationId, "see invitations");
      const pending = {
        organizationId: input.organizationId,
        acceptedAt: null,
        revokedAt: null,
        expiresAt: { $gt: now() },
      };
      return findPage(c.invitations, pending, input);
    },

    /** Revoked at once; revoking twice is the same; a used invitation cannot be revoked (409). */
    async revokeInvitation(userId: string, input: { organizationId: string; id: string }) {
      const invitation = await managedInvitation(userId, input.organizationId, input.id);
      if (invitation.acceptedAt) throw failedPrecondition(REFUSED.accepted);
      return (
        (await c.invitations.findOneAndUpdate(
          { _id: invitation._id, acceptedAt: null, revokedAt: null },
          { $set: { revokedAt: now() } },
          { returnDocument: "after" },
        )) ?? ((await c.invitations.findOne({ _id: invitation._id })) as InvitationDoc)
      );
    },

    /** The signed-in user joins the invitation's organization with its role. */
    async acceptInvitation(userId: string, token: string) {
      return accept(await getUser(userId), token);
    },

    /** For sign-up: refuses a token the new address could not accept, before the account exists. */
    async checkInvitation(token: string, email: string) {
      await usable(token, email);
    },

    acceptAsNewUser: accept,
  };
}
