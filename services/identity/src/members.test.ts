/**
 * Members and invitations in the identity use cases (issue #35 "Organization"): role changes with
 * their rules, the last owner, removal (and onboarding afterwards), invitations from creation to
 * acceptance and every refusal; on the in-memory store with a clock the tests move.
 */
import { DomainError, type ErrorKind } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hashSecret } from "./domain/api-keys.js";
import { INVITATION_TTL_MS, parseInvitationToken } from "./domain/invitations.js";
import { createTokenIssuer, type TokenIssuer } from "./domain/token-issuer.js";
import { createIdentity, type Identity } from "./identity.js";
import {
  ensureIdentityIndexes,
  type IdentityCollections,
  identityCollections,
  type Role,
} from "./store/identity-store.js";

const T0 = new Date("2025-03-01T09:00:00.000Z");
const PASSWORD = "correct-horse-battery";

let issuer: TokenIssuer;
beforeAll(async () => {
  issuer = await createTokenIssuer({ issuer: "kiln-test", audience: "kiln-api", ttlSeconds: 600 });
});

let clock: { now: Date };
let c: IdentityCollections;
let identity: Identity;
beforeEach(async () => {
  const store = createMemoryStore();
  await ensureIdentityIndexes(store);
  clock = { now: T0 };
  c = identityCollections(store);
  identity = createIdentity({ collections: c, issuer, now: () => clock.now });
});

async function expectKind(p: Promise<unknown>, kind: ErrorKind, message?: RegExp): Promise<void> {
  const error = await p.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  expect((error as DomainError).kind).toBe(kind);
  if (message) expect((error as DomainError).message).toMatch(message);
}

async function user(email = `${newId("usr")}@example.com`) {
  return (await identity.signUp({ email, password: PASSWORD, fullName: "Someone" })).user;
}

/** An onboarded owner, and members of their organization with the given roles (user ids). */
async function organization(...roles: Role[]) {
  const owner = await user();
  const { organization: org } = await identity.completeOnboarding(owner._id, {
    fullName: "Owner",
    organizationName: "Acme",
  });
  const ids: string[] = [];
  for (const role of roles) {
    const u = await user();
    await identity.addMember(owner._id, { organizationId: org._id, email: u.email, role });
    ids.push(u._id);
  }
  return { ownerId: owner._id, organizationId: org._id, ids };
}

const roleOf = async (organizationId: string, userId: string) =>
  (await c.memberships.findOne({ _id: `${organizationId}:${userId}` }))?.role ?? null;

describe("listing members", () => {
  it("pages through the members with the cursor each page returns", async () => {
    const { ownerId, organizationId, ids } = await organization("member", "admin");
    const seen: string[] = [];
    let cursor = "";
    do {
      const page = await identity.listMembers({ type: "user", id: ownerId }, { organizationId, limit: 2, cursor });
      seen.push(...page.items.map((m) => m.user._id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual([ownerId, ...ids].sort());
  });
});

describe("changing a member's role", () => {
  it("owners change any role; the permissions follow the role", async () => {
    const { ownerId, organizationId, ids } = await organization("member", "admin");
    const [memberId = "", adminId = ""] = ids;
    const r = await identity.changeMemberRole(ownerId, { organizationId, userId: memberId, role: "owner" });
    expect(r.membership).toMatchObject({
      role: "owner",
      permissions: ["ai_platform", "manage_api_keys", "manage_members"],
    });
    expect(r.user._id).toBe(memberId);
    await identity.changeMemberRole(ownerId, { organizationId, userId: adminId, role: "member" });
    expect(await roleOf(organizationId, adminId)).toBe("member");
    expect((await c.memberships.findOne({ _id: `${organizationId}:${adminId}` }))?.permissions).toEqual([
      "ai_platform",
    ]);
  });

  it("admins change members and admins, never owners nor to owner; members change nothing", async () => {
    const { ownerId, organizationId, ids } = await organization("admin", "member", "member");
    const [adminId = "", memberId = "", otherId = ""] = ids;
    await identity.changeMemberRole(adminId, { organizationId, userId: memberId, role: "admin" });
    expect(await roleOf(organizationId, memberId)).toBe("admin");
    await expectKind(
      identity.changeMemberRole(adminId, { organizationId, userId: otherId, role: "owner" }),
      "permission_denied",
      /only owners/,
    );
    await expectKind(
      identity.changeMemberRole(adminId, { organizationId, userId: ownerId, role: "member" }),
      "permission_denied",
    );
    await expectKind(
      identity.changeMemberRole(otherId, { organizationId, userId: memberId, role: "member" }),
      "permission_denied",
    );
    expect(await roleOf(organizationId, ownerId)).toBe("owner");
    expect(await roleOf(organizationId, otherId)).toBe("member");
  });

  it("no one raises their own role; an owner may step down while another owner stays", async () => {
    const { ownerId, organizationId, ids } = await organization("admin", "owner");
    const [adminId = "", secondOwner = ""] = ids;
    await expectKind(
      identity.changeMemberRole(adminId, { organizationId, userId: adminId, role: "owner" }),
      "permission_denied",
      /raise your own role/,
    );
    await identity.changeMemberRole(adminId, { organizationId, userId: adminId, role: "member" });
    expect(await roleOf(organizationId, adminId)).toBe("member");
    await identity.changeMemberRole(ownerId, { organizationId, userId: ownerId, role: "admin" });
    expect(await roleOf(organizationId, ownerId)).toBe("admin");
    await expectKind(
      identity.changeMemberRole(secondOwner, { organizationId, userId: secondOwner, role: "admin" }),
      "failed_precondition",
      /at least one owner/,
    );
    expect(await roleOf(organizationId, secondOwner)).toBe("owner");
  });

  it("refuses a bad role, an unknown member and a stranger's organization", async () => {
    const { ownerId, organizationId, ids } = await organization("member");
    await expectKind(
      identity.changeMemberRole(ownerId, { organizationId, userId: ids[0] ?? "", role: "boss" }),
      "invalid_argument",
    );
    await expectKind(
      identity.changeMemberRole(ownerId, { organizationId, userId: newId("usr"), role: "admin" }),
      "not_found",
    );
    const other = await organization();
    await expectKind(
      identity.changeMemberRole(other.ownerId, { organizationId, userId: ids[0] ?? "", role: "admin" }),
      "not_found",
    );
  });
});

describe("removing a member", () => {
  it("removes a member, who then cannot see the organization; owners remove owners, admins do not", async () => {
    const { ownerId, organizationId, ids } = await organization("member", "admin", "owner");
    const [memberId = "", adminId = "", secondOwner = ""] = ids;
    const removed = await identity.removeMember(adminId, { organizationId, userId: memberId });
    expect(removed.membership).toMatchObject({ userId: memberId, role: "member" });
    await expectKind(identity.getOrganization({ type: "user", id: memberId }, organizationId), "not_found");
    await expectKind(
      identity.authorize({ type: "user", id: memberId }, { organizationId, requireAi: true, scope: "" }),
      "not_found",
    );
    await expectKind(identity.removeMember(adminId, { organizationId, userId: secondOwner }), "permission_denied");
    await identity.removeMember(ownerId, { organizationId, userId: secondOwner });
    expect(await roleOf(organizationId, secondOwner)).toBeNull();
    await expectKind(identity.removeMember(ownerId, { organizationId, userId: memberId }), "not_found");
  });

  it("keeps the last owner; anyone may leave; a removed creator onboards a new organization", async () => {
    const { ownerId, organizationId, ids } = await organization("member");
    const [memberId = ""] = ids;
    await expectKind(identity.removeMember(ownerId, { organizationId, userId: ownerId }), "failed_precondition");
    await identity.removeMember(memberId, { organizationId, userId: memberId });
    expect(await roleOf(organizationId, memberId)).toBeNull();

    const newOwner = await user();
    await identity.addMember(ownerId, { organizationId, email: newOwner.email, role: "owner" });
    await identity.removeMember(newOwner._id, { organizationId, userId: ownerId });
    const again = await identity.completeOnboarding(ownerId, { fullName: "Owner", organizationName: "Fresh start" });
    expect(again.created).toBe(true);
    expect(again.organization._id).not.toBe(organizationId);
    expect(await roleOf(organizationId, ownerId)).toBeNull();
  });
});

describe("invitations", () => {
  it("invites with a single-use token stored hashed; the invited user accepts and joins with the role", async () => {
    const { ownerId, organizationId } = await organization();
    const { invitation, token } = await identity.createInvitation(ownerId, {
      organizationId,
      email: " Grace@Example.com ",
      role: "admin",
    });
    expect(invitation).toMatchObject({ email: "grace@example.com", role: "admin", acceptedAt: null });
    expect(invitation.expiresAt.getTime() - T0.getTime()).toBe(INVITATION_TTL_MS);
    const parsed = parseInvitationToken(token);
    expect(parsed?.invitationId).toBe(invitation._id);
    const stored = await c.invitations.findOne({ _id: invitation._id });
    expect(JSON.stringify(stored)).not.toContain(parsed?.secret ?? "?");
    expect(stored?.secretHash).toBe(hashSecret(parsed?.secret ?? ""));

    const listed = await identity.listInvitations(ownerId, { organizationId, limit: 0, cursor: "" });
    expect(listed.items.map((i) => i._id)).toEqual([invitation._id]);

    const grace = await user("grace@example.com");
    const joined = await identity.acceptInvitation(grace._id, token);
    expect(joined.organization._id).toBe(organizationId);
    expect(joined.membership).toMatchObject({ userId: grace._id, role: "admin" });
    await expectKind(identity.acceptInvitation(grace._id, token), "failed_precondition", /already been used/);
    expect((await identity.listInvitations(ownerId, { organizationId, limit: 0, cursor: "" })).items).toEqual([]);
  });

  it("signs up with an invitation: the new user joins; a bad token makes no account", async () => {
    const { ownerId, organizationId } = await organization();
    const { token } = await identity.createInvitation(ownerId, {
      organizationId,
      email: "ada@example.com",
      role: "member",
    });
    await expectKind(
      identity.signUp({ email: "eve@example.com", password: PASSWORD, fullName: "Eve", invitationToken: token }),
      "permission_denied",
      /another e-mail address/,
    );
    await expectKind(
      identity.signUp({ email: "ada@example.com", password: PASSWORD, fullName: "Ada", invitationToken: "inv_nope" }),
      "not_found",
    );
    expect(await c.users.countDocuments({})).toBe(1);
    const r = await identity.signUp({
      email: "ada@example.com",
      password: PASSWORD,
      fullName: "Ada",
      invitationToken: token,
    });
    expect(r.membership).toMatchObject({ organizationId, userId: r.user._id, role: "member" });
    expect(r.accessToken).toBeTruthy();
  });

  it("refuses expired, revoked, forged and foreign tokens, and a member twice", async () => {
    const { ownerId, organizationId, ids } = await organization("member");
    const ada = await user("ada@example.com");
    const expired = await identity.createInvitation(ownerId, { organizationId, email: ada.email, role: "member" });
    clock.now = new Date(T0.getTime() + INVITATION_TTL_MS + 1);
    await expectKind(identity.acceptInvitation(ada._id, expired.token), "failed_precondition", /expired/);
    expect((await identity.listInvitations(ownerId, { organizationId, limit: 0, cursor: "" })).items).toEqual([]);

    const revoked = await identity.createInvitation(ownerId, { organizationId, email: ada.email, role: "member" });
    const r = await identity.revokeInvitation(ownerId, { organizationId, id: revoked.invitation._id });
    expect(r.revokedAt).toEqual(clock.now);
    await expectKind(identity.acceptInvitation(ada._id, revoked.token), "failed_precondition", /revoked/);

    const live = await identity.createInvitation(ownerId, { organizationId, email: ada.email, role: "member" });
    const forged = `${live.invitation._id}_${"A".repeat(43)}`;
    await expectKind(identity.acceptInvitation(ada._id, forged), "not_found");
    await expectKind(identity.acceptInvitation(ada._id, "not-a-token"), "not_found");
    const eve = await user("eve@example.com");
    await expectKind(identity.acceptInvitation(eve._id, live.token), "permission_denied");
    await identity.acceptInvitation(ada._id, live.token);
    await expectKind(
      identity.createInvitation(ownerId, { organizationId, email: ada.email, role: "member" }),
      "already_exists",
    );
    await expectKind(
      identity.revokeInvitation(ownerId, { organizationId, id: live.invitation._id }),
      "failed_precondition",
    );
    // Members do not manage invitations; other organizations do not see them.
    await expectKind(
      identity.createInvitation(ids[0] ?? "", { organizationId, email: "x@example.com", role: "member" }),
      "permission_denied",
    );
    await expectKind(
      identity.listInvitations(ids[0] ?? "", { organizationId, limit: 0, cursor: "" }),
      "permission_denied",
    );
    const other = await organization();
    await expectKind(
      identity.revokeInvitation(other.ownerId, { organizationId, id: live.invitation._id }),
      "not_found",
    );
    await expectKind(
      identity.revokeInvitation(other.ownerId, { organizationId: other.organizationId, id: live.invitation._id }),
      "not_found",
    );
  });

  it("admins invite members and admins, only owners invite owners", async () => {
    const { ownerId, organizationId, ids } = await organization("admin");
    await identity.createInvitation(ids[0] ?? "", { organizationId, email: "a@example.com", role: "admin" });
    await expectKind(
      identity.createInvitation(ids[0] ?? "", { organizationId, email: "b@example.com", role: "owner" }),
      "permission_denied",
    );
    await identity.createInvitation(ownerId, { organizationId, email: "b@example.com", role: "owner" });
    await expectKind(
      identity.createInvitation(ownerId, { organizationId, email: "not an address", role: "member" }),
      "invalid_argument",
    );
  });
});
