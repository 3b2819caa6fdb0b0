import { DomainError, notFound, unauthenticated } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { isDuplicateKeyError } from "@kiln/kit/store";
import { randomBase62 } from "../domain/api-keys.js";
import { highestMappedRole, type MappedRole } from "../domain/mapped-roles.js";
import { Issues, normalizeEmail, permissionsOf, type Role } from "../domain/rules.js";
import type { MembershipDoc, UserDoc } from "../store/identity-store.js";
import type { SamlSettingsDoc } from "../store/saml-store.js";
import type { Access } from "./access.js";

type Join = (organizationId: string, user: UserDoc, role: Role) => Promise<MembershipDoc>;
type Provider = (organizationId: string) => Promise<SamlSettingsDoc>;

/** How long an SP-initiated sign-in may take at the IdP before its state is forgotten. */
export const SAML_REQUEST_TTL_MS = 10 * 60_000;

/** The role a sign-in gives: the role attribute's values through the mapping, else the default role. */
export function samlRoleOf(settings: SamlSettingsDoc, values: readonly string[]): MappedRole {
  if (!settings.roleAttribute) return settings.defaultRole;
  const mapping = Object.fromEntries(settings.roleMapping.map((m) => [m.value, m.role]));
  return highestMappedRole(values, mapping, settings.defaultRole);
}

/**
 * The identity side of a SAML sign-in the gateway verified (docs/security.md "SAML sign-in"): the
 * state of SP-initiated sign-ins, the refusal of a replayed assertion, the user found or made just
 * in time, their membership and role, and the access token. An organization's IdP speaks only for
 * the users it owns: those it signed in before and those the organization's SCIM made who sign in
 * no other way; any other address gets a user of its own, so no IdP takes over an account that
 * signs in with a password or another provider.
 */
export function samlSignInUseCases(access: Access, join: Join, provider: Provider) {
  const { c, now, issuer, getUser, membershipOf } = access;

  /** This organization's SCIM user with the address, when nobody signs in as them yet. */
  async function provisionedHere(organizationId: string, email: string): Promise<UserDoc | null> {
    // Several users may hold the address (each unlinked OIDC subject makes one): this SCIM's is the one.
    for (const user of await c.users.find({ email }, { limit: 20 })) {
      if (!(await c.scimUsers.findOne({ _id: `${organizationId}:${user._id}` }))) continue;
      const [password, external] = await Promise.all([
        c.passwordLogins.findOne({ userId: user._id }),
        c.externalLogins.findOne({ userId: user._id }),
      ]);
      return password || external ? null : user;
    }
    return null;
  }

  async function userFor(organizationId: string, email: string, fullName: string) {
    const loginId = `saml:${organizationId} ${email}`;
    const existing = await c.externalLogins.findOne({ _id: loginId });
    if (existing) return { user: await getUser(existing.userId), created: false };
    const at = now();
    const provisioned = await provisionedHere(organizationId, email);
    const user = provisioned ?? { _id: newId("usr"), email, fullName, createdAt: at, updatedAt: at };
    if (!provisioned) await c.users.insertOne(user);
    try {
      await c.externalLogins.insertOne({ _id: loginId, userId: user._id, createdAt: at });
      return { user, created: !provisioned };
    } catch (e) {
      // The same person signing in twice at once: the first link wins.
      if (!provisioned) await c.users.deleteOne({ _id: user._id });
      const winner = isDuplicateKeyError(e) ? await c.externalLogins.findOne({ _id: loginId }) : null;
      if (!winner) throw e;
      return { user: await getUser(winner.userId), created: false };
    }
  }

  /** Joins with the role, or moves a member to it when the IdP sends roles; owners stay owners. */
  async function admit(settings: SamlSettingsDoc, user: UserDoc, role: MappedRole): Promise<Role> {
    const organizationId = settings.organizationId;
    let membership = await membershipOf(organizationId, user._id);
    if (!membership) {
      try {
        return (await join(organizationId, user, role)).role;
      } catch (e) {
        if (!(e instanceof DomainError && e.kind === "already_exists")) throw e;
        membership = await membershipOf(organizationId, user._id);
        if (!membership) throw e;
      }
    }
    if (!settings.roleAttribute || membership.role === "owner" || membership.role === role) return membership.role;
    await c.memberships.updateOne(
      { _id: membership._id, role: membership.role },
      { $set: { role, permissions: permissionsOf(role) } },
    );
    return role;
  }

  return {
    async saveSamlRequest(input: { organizationId: string; requestId: string; returnTo: string }) {
      const issues = new Issues();
      issues.text("requestId", input.requestId, { max: 256 });
      issues.text("returnTo", input.returnTo, { max: 2000 });
      issues.throwIfAny();
      await provider(input.organizationId);
      const at = now();
      const state = `sst_${randomBase62(43)}`;
      await c.samlRequests.insertOne({
        _id: state,
        organizationId: input.organizationId,
        requestId: input.requestId,
        returnTo: input.returnTo,
        createdAt: at,
        expiresAt: new Date(at.getTime() + SAML_REQUEST_TTL_MS),
      });
      return state;
    },

    /** The state's request, once: a second take (or an expired state, or another organization's) is not_found. */
    async takeSamlRequest(input: { organizationId: string; state: string }) {
      const doc = await c.samlRequests.findOne({ _id: input.state, organizationId: input.organizationId });
      if (!doc) throw notFound("SAML sign-in request");
      const taken = await c.samlRequests.deleteOne({ _id: doc._id, organizationId: input.organizationId });
      if (taken.deletedCount !== 1 || doc.expiresAt.getTime() <= now().getTime()) {
        throw notFound("SAML sign-in request");
      }
      return doc;
    },

    async completeSamlSignIn(input: {
      organizationId: string;
      assertionId: string;
      assertionExpiresAt?: Date;
      email: string;
      fullName: string;
      roleValues: string[];
    }) {
      const issues = new Issues();
      const email = normalizeEmail(issues, input.email);
      issues.text("assertionId", input.assertionId, { max: 256 });
      if (!issues.isEmpty()) throw unauthenticated("the assertion's NameID is not an e-mail address, or it has no ID");
      const settings = await provider(input.organizationId);
      // The assertion's id first: a replay changes nothing else.
      const expiresAt = input.assertionExpiresAt ?? new Date(now().getTime() + 86_400_000);
      try {
        await c.samlAssertions.insertOne({
          _id: `${input.organizationId}:${input.assertionId}`,
          organizationId: input.organizationId,
          expiresAt,
        });
      } catch (e) {
        if (isDuplicateKeyError(e)) throw unauthenticated("this assertion was used before: a replay is refused");
        throw e;
      }
      const { user, created } = await userFor(input.organizationId, email, input.fullName.trim().slice(0, 200));
      const role = await admit(settings, user, samlRoleOf(settings, input.roleValues));
      return { user, created, role, ...(await issuer.issue(user._id)) };
    },

    /** Forgets expired sign-in states and the ids of assertions past their life. */
    async sweepSaml(): Promise<number> {
      const at = now();
      const requests = await c.samlRequests.deleteMany({ expiresAt: { $lte: at } });
      const assertions = await c.samlAssertions.deleteMany({ expiresAt: { $lte: at } });
      return requests.deletedCount + assertions.deletedCount;
    },
  };
}
