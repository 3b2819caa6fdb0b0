/**
 * SCIM provisioning in the identity use cases (issue #51, docs/scim.md): tokens stored as hashes
 * and checked on every call, every read and write scoped to the token's organization, roles from
 * group names, deactivation removing the membership and revoking the member's keys, and the link
 * of a provisioned user to their first verified OIDC sign-in; on the in-memory store.
 */
import { DomainError, type ErrorKind } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hashSecret } from "./domain/api-keys.js";
import { parseScimToken } from "./domain/scim-tokens.js";
import type { ScimUserInput } from "./domain/scim-users.js";
import { createTokenIssuer, type TokenIssuer } from "./domain/token-issuer.js";
import { createIdentity, type Identity } from "./identity.js";
import { ensureIdentityIndexes, type IdentityCollections, identityCollections } from "./store/identity-store.js";

let issuer: TokenIssuer;
beforeAll(async () => {
  issuer = await createTokenIssuer({ issuer: "kiln-test", audience: "kiln-api", ttlSeconds: 600 });
});

let c: IdentityCollections;
let identity: Identity;
beforeEach(async () => {
  const store = createMemoryStore();
  await ensureIdentityIndexes(store);
  c = identityCollections(store);
  identity = createIdentity({ collections: c, issuer });
});

async function expectKind(p: Promise<unknown>, kind: ErrorKind): Promise<DomainError> {
  const error = await p.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  expect((error as DomainError).kind).toBe(kind);
  return error as DomainError;
}

/** An onboarded owner's organization and a SCIM token made for it. */
async function organization() {
  const email = `${newId("usr")}@example.com`;
  const { user } = await identity.signUp({ email, password: "correct-horse-battery", fullName: "Owner" });
  const { organization: org } = await identity.completeOnboarding(user._id, {
    fullName: "Owner",
    organizationName: "Org",
  });
  const { token } = await identity.createScimToken(user._id, { organizationId: org._id, name: "Okta" });
  return { ownerId: user._id, organizationId: org._id, token };
}

const input = (email: string, fields: Partial<ScimUserInput> = {}): ScimUserInput => ({
  externalId: "",
  userName: email,
  active: true,
  displayName: "",
  givenName: "Ada",
  familyName: "Lovelace",
  emails: [{ value: email, type: "work", primary: true }],
  ...fields,
});

describe("SCIM tokens", () => {
  it("stores only the hash of the secret and finds the token's organization", async () => {
    const { organizationId, token } = await organization();
    const parsed = parseScimToken(token);
    const stored = await c.scimTokens.findOne({ _id: parsed?.tokenId ?? "" });
    expect(stored?.secretHash).toBe(hashSecret(parsed?.secret ?? ""));
    expect(JSON.stringify(stored)).not.toContain(parsed?.secret);
    expect(await identity.scimOrganizationOf(token)).toBe(organizationId);
  });

  it("refuses a forged, malformed or revoked token", async () => {
    const { ownerId, organizationId, token } = await organization();
    const parsed = parseScimToken(token);
    await expectKind(
      identity.scimOrganizationOf(`scim_${parsed?.tokenId.slice(4)}_${"A".repeat(43)}`),
      "unauthenticated",
    );
    await expectKind(identity.scimOrganizationOf("scim_nope"), "unauthenticated");
    await expectKind(identity.scimOrganizationOf(`sk_${"a".repeat(32)}_${"b".repeat(43)}`), "unauthenticated");
    await identity.revokeScimToken(ownerId, { organizationId, id: parsed?.tokenId ?? "" });
    await expectKind(identity.scimOrganizationOf(token), "unauthenticated");
  });

  it("lets only owners and admins of the organization manage tokens", async () => {
    const a = await organization();
    const b = await organization();
    await expectKind(identity.createScimToken(b.ownerId, { organizationId: a.organizationId, name: "x" }), "not_found");
    const id = parseScimToken(a.token)?.tokenId ?? "";
    await expectKind(identity.revokeScimToken(b.ownerId, { organizationId: b.organizationId, id }), "not_found");
    const { user } = await identity.signUp({
      email: `${newId("usr")}@example.com`,
      password: "correct-horse-battery",
      fullName: "M",
    });
    await identity.addMember(a.ownerId, { organizationId: a.organizationId, email: user.email, role: "member" });
    await expectKind(
      identity.listScimTokens(user._id, { organizationId: a.organizationId, limit: 10, cursor: "" }),
      "permission_denied",
    );
  });
});

describe("provisioned users and groups", () => {
  it("scopes every read and write to the organization", async () => {
    const a = await organization();
    const b = await organization();
    const ada = await identity.createScimUser(a.organizationId, input("ada@example.com"));
    await expectKind(identity.getScimUser(b.organizationId, ada.userId), "not_found");
    await expectKind(identity.replaceScimUser(b.organizationId, ada.userId, input("ada@example.com")), "not_found");
    await expectKind(identity.deleteScimUser(b.organizationId, ada.userId), "not_found");
    expect(
      (
        await identity.listScimUsers(b.organizationId, {
          userName: "ada@example.com",
          email: "",
          externalId: "",
          startIndex: 1,
          count: 10,
        })
      ).totalResults,
    ).toBe(0);
    await expectKind(
      identity.createScimGroup(b.organizationId, {
        displayName: "kiln-admins",
        externalId: "",
        memberIds: [ada.userId],
      }),
      "invalid_argument",
    );
    // The same person in B: the same Kiln user, B's own record.
    const inB = await identity.createScimUser(b.organizationId, input("ADA@example.com", { active: false }));
    expect(inB.userId).toBe(ada.userId);
    expect(await c.memberships.findOne({ _id: `${b.organizationId}:${ada.userId}` })).toBeNull();
    expect((await identity.getScimUser(a.organizationId, ada.userId)).active).toBe(true);
  });

  it("gives the highest role of the user's groups, never touches owners, and follows group changes", async () => {
    const { ownerId, organizationId } = await organization();
    const ada = await identity.createScimUser(organizationId, input("ada@example.com"));
    const role = async (userId: string) => (await c.memberships.findOne({ _id: `${organizationId}:${userId}` }))?.role;
    expect(await role(ada.userId)).toBe("member");
    const admins = await identity.createScimGroup(organizationId, {
      displayName: "Kiln-Admins",
      externalId: "",
      memberIds: [ada.userId],
    });
    expect(await role(ada.userId)).toBe("admin");
    await identity.createScimGroup(organizationId, {
      displayName: "kiln-members",
      externalId: "",
      memberIds: [ada.userId],
    });
    expect(await role(ada.userId)).toBe("admin");
    await identity.replaceScimGroup(organizationId, admins._id, {
      displayName: "engineering",
      externalId: "",
      memberIds: [ada.userId],
    });
    expect(await role(ada.userId)).toBe("member");
    const owner = await c.users.findOne({ _id: ownerId });
    await identity.createScimUser(organizationId, input(owner?.email ?? ""));
    await identity.replaceScimGroup(organizationId, admins._id, {
      displayName: "kiln-admins",
      externalId: "",
      memberIds: [ownerId],
    });
    expect(await role(ownerId)).toBe("owner");
    await identity.deleteScimGroup(organizationId, admins._id);
    expect(await role(ownerId)).toBe("owner");
    await expectKind(
      identity.createScimGroup(organizationId, { displayName: "KILN-MEMBERS", externalId: "", memberIds: [] }),
      "already_exists",
    );
  });

  it("deactivation removes the membership and revokes the user's keys; reactivation restores the role", async () => {
    const { organizationId } = await organization();
    const ada = await identity.createScimUser(organizationId, input("ada@example.com"));
    await identity.createScimGroup(organizationId, {
      displayName: "kiln-admins",
      externalId: "",
      memberIds: [ada.userId],
    });
    const { apiKey } = await identity.createApiKey(ada.userId, { organizationId, name: "k", scopes: ["prompts:read"] });
    const off = await identity.replaceScimUser(organizationId, ada.userId, input("ada@example.com", { active: false }));
    expect(off.revokedApiKeyIds).toEqual([apiKey._id]);
    expect(await c.memberships.findOne({ _id: `${organizationId}:${ada.userId}` })).toBeNull();
    expect((await c.apiKeys.findOne({ _id: apiKey._id }))?.revokedAt).toBeInstanceOf(Date);
    await expectKind(identity.getOrganization({ type: "user", id: ada.userId }, organizationId), "not_found");
    await identity.replaceScimUser(organizationId, ada.userId, input("ada@example.com"));
    expect((await c.memberships.findOne({ _id: `${organizationId}:${ada.userId}` }))?.role).toBe("admin");
    expect((await c.apiKeys.findOne({ _id: apiKey._id }))?.revokedAt).toBeInstanceOf(Date);
  });

  it("an active user removed through /api is a member again at the identity provider's next update", async () => {
    const { ownerId, organizationId } = await organization();
    const ada = await identity.createScimUser(organizationId, input("ada@example.com"));
    await identity.removeMember(ownerId, { organizationId, userId: ada.userId });
    await identity.replaceScimUser(organizationId, ada.userId, input("ada@example.com", { displayName: "Ada" }));
    expect((await c.memberships.findOne({ _id: `${organizationId}:${ada.userId}` }))?.role).toBe("member");
  });

  it("refuses a userName taken in the organization, a user without an address, and the last owner's deactivation", async () => {
    const { ownerId, organizationId } = await organization();
    await identity.createScimUser(organizationId, input("ada@example.com"));
    await expectKind(
      identity.createScimUser(
        organizationId,
        input("ADA@example.com", { emails: [{ value: "x@example.com", type: "", primary: true }] }),
      ),
      "already_exists",
    );
    await expectKind(identity.createScimUser(organizationId, input("ada", { emails: [] })), "invalid_argument");
    const owner = await c.users.findOne({ _id: ownerId });
    await identity.createScimUser(organizationId, input(owner?.email ?? ""));
    const error = await expectKind(identity.deleteScimUser(organizationId, ownerId), "failed_precondition");
    expect(error.message).toMatch(/owner/);
    expect(await c.memberships.findOne({ _id: `${organizationId}:${ownerId}` })).not.toBeNull();
  });
});

describe("the first OIDC sign-in of a provisioned user", () => {
  const oidc = { issuer: "https://idp.example.com", subject: "00u-ada", email: "Ada@Example.com", fullName: "Ada" };

  it("links a verified address to the user SCIM made, who is then the organization's member", async () => {
    const { organizationId } = await organization();
    const ada = await identity.createScimUser(organizationId, input("ada@example.com"));
    const signedIn = await identity.resolveExternalUser({ ...oidc, emailVerified: true });
    expect(signedIn._id).toBe(ada.userId);
    await identity.getOrganization({ type: "user", id: signedIn._id }, organizationId);
  });

  it("makes a new user for an unverified address, or when the provisioned user signs in otherwise", async () => {
    const { organizationId } = await organization();
    const ada = await identity.createScimUser(organizationId, input("ada@example.com"));
    expect((await identity.resolveExternalUser({ ...oidc, emailVerified: false }))._id).not.toBe(ada.userId);
    const { user: grace } = await identity.signUp({
      email: "grace@example.com",
      password: "correct-horse-battery",
      fullName: "G",
    });
    await identity.createScimUser(organizationId, input("grace@example.com"));
    const other = await identity.resolveExternalUser({
      ...oidc,
      subject: "00u-grace",
      email: "grace@example.com",
      emailVerified: true,
    });
    expect(other._id).not.toBe(grace._id);
  });
});
