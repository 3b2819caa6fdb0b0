import { alreadyExists, unauthenticated } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { isDuplicateKeyError } from "@kiln/kit/store";
import { hashPassword, verifyPassword } from "../domain/passwords.js";
import { checkPassword, Issues, normalizeEmail } from "../domain/rules.js";
import type { MembershipDoc, UserDoc } from "../store/identity-store.js";
import type { Access } from "./access.js";
import type { invitationUseCases } from "./invitations.js";

type Invitations = Pick<ReturnType<typeof invitationUseCases>, "checkInvitation" | "acceptAsNewUser">;

// A password check costs the same whether or not the address exists (made on first use).
let dummyHash: Promise<string> | undefined;
const dummyPasswordHash = () => {
  dummyHash ??= hashPassword("not-a-real-password");
  return dummyHash;
};

/** Users and their sign-in: sign-up, password tokens, external users, onboarding. */
export function accountUseCases(access: Access, invitations: Invitations) {
  const { c, now, issuer, getUser, memberAccess, ensureOrganization } = access;

  /**
   * The user SCIM provisioning made for `email` that nobody signs in as yet (no password, no other
   * external login): a new subject of the deployment's OIDC issuer with that verified address is them.
   */
  async function provisionedUser(email: string): Promise<UserDoc | null> {
    if (!email) return null;
    // Several users may hold the address (each unlinked OIDC subject makes one): SCIM's is the one.
    for (const user of await c.users.find({ email }, { limit: 20 })) {
      if (!(await c.scimUsers.findOne({ userId: user._id }))) continue;
      const [password, external] = await Promise.all([
        c.passwordLogins.findOne({ userId: user._id }),
        c.externalLogins.findOne({ userId: user._id }),
      ]);
      return password || external ? null : user;
    }
    return null;
  }

  return {
    /**
     * With an invitation's token, the new user joins its organization (instead of onboarding one):
     * the token is checked first, so a bad one makes no account.
     */
    async signUp(input: { email: string; password: string; fullName: string; invitationToken?: string }) {
      const issues = new Issues();
      const email = normalizeEmail(issues, input.email);
      checkPassword(issues, input.password);
      const fullName = issues.text("fullName", input.fullName, { min: 0 });
      issues.throwIfAny();
      if (input.invitationToken) await invitations.checkInvitation(input.invitationToken, email);
      if (await c.passwordLogins.findOne({ _id: email })) {
        throw alreadyExists("an account with this e-mail address exists", [{ field: "email", issue: "is taken" }]);
      }
      const at = now();
      const user: UserDoc = { _id: newId("usr"), email, fullName, createdAt: at, updatedAt: at };
      const passwordHash = await hashPassword(input.password);
      await c.users.insertOne(user);
      try {
        await c.passwordLogins.insertOne({ _id: email, userId: user._id, passwordHash, createdAt: at });
      } catch (e) {
        await c.users.deleteOne({ _id: user._id });
        if (isDuplicateKeyError(e)) {
          throw alreadyExists("an account with this e-mail address exists", [{ field: "email", issue: "is taken" }]);
        }
        throw e;
      }
      let membership: MembershipDoc | undefined;
      if (input.invitationToken) {
        // Revoked or used between the check and now: the account stands, without the membership.
        membership = await invitations.acceptAsNewUser(user, input.invitationToken).then(
          (r) => r.membership,
          () => undefined,
        );
      }
      return { user, membership, ...(await issuer.issue(user._id)) };
    },

    async issueToken(input: { email: string; password: string }) {
      const login = await c.passwordLogins.findOne({ _id: input.email.trim().toLowerCase() });
      const ok = await verifyPassword(input.password, login?.passwordHash ?? (await dummyPasswordHash()));
      if (!login || !ok) throw unauthenticated("wrong e-mail address or password");
      return issuer.issue(login.userId);
    },

    /** An unknown external subject becomes a user on first sight (api.md "Authentication"). */
    async resolveExternalUser(input: {
      issuer: string;
      subject: string;
      email: string;
      fullName: string;
      emailVerified?: boolean;
    }) {
      const issues = new Issues();
      issues.text("issuer", input.issuer, { max: 1000 });
      issues.text("subject", input.subject, { max: 1000 });
      issues.throwIfAny();
      const loginId = `${input.issuer} ${input.subject}`;
      const existing = await c.externalLogins.findOne({ _id: loginId });
      if (existing) return getUser(existing.userId);
      const at = now();
      const email = input.email.trim().toLowerCase();
      const provisioned = input.emailVerified ? await provisionedUser(email) : null;
      const user: UserDoc = provisioned ?? {
        _id: newId("usr"),
        email,
        fullName: input.fullName.trim(),
        createdAt: at,
        updatedAt: at,
      };
      if (!provisioned) await c.users.insertOne(user);
      try {
        await c.externalLogins.insertOne({ _id: loginId, userId: user._id, createdAt: at });
        return user;
      } catch (e) {
        // Another request saw the same subject first: use its user.
        if (!provisioned) await c.users.deleteOne({ _id: user._id });
        if (!isDuplicateKeyError(e)) throw e;
        const winner = await c.externalLogins.findOne({ _id: loginId });
        if (!winner) throw e;
        return getUser(winner.userId);
      }
    },

    /**
     * Idempotent per user: the onboarding record (keyed by user id) is written first, so a repeat
     * or a concurrent call finds it and returns the same organization, and a call that crashed
     * half-way is completed by the next one.
     */
    async completeOnboarding(userId: string, input: { fullName: string; organizationName: string }) {
      const issues = new Issues();
      const fullName = issues.text("fullName", input.fullName);
      const organizationName = issues.text("organizationName", input.organizationName);
      issues.throwIfAny();
      let user = await getUser(userId);
      const at = now();
      let created = false;
      let record = await c.onboardings.findOne({ _id: userId });
      if (!record) {
        const candidate = { _id: userId, organizationId: newId("org"), organizationName, createdAt: at };
        try {
          await c.onboardings.insertOne(candidate);
          record = candidate;
          created = true;
        } catch (e) {
          if (!isDuplicateKeyError(e)) throw e;
          record = await c.onboardings.findOne({ _id: userId });
        }
      }
      if (!record) throw new Error("onboarding record vanished");
      await ensureOrganization(record.organizationId, record.organizationName, userId, record.createdAt);
      if (created && user.fullName !== fullName) {
        await c.users.updateOne({ _id: userId }, { $set: { fullName, updatedAt: at } });
        user = { ...user, fullName, updatedAt: at };
      }
      const { organization, membership } = await memberAccess(userId, record.organizationId);
      return { user, organization, membership, created };
    },
  };
}
