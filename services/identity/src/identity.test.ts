import { createHash } from "node:crypto";
import { DomainError, type ErrorKind, type FieldIssue } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import type { Principal } from "@kiln/kit/principal";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { createLocalJWKSet, jwtVerify } from "jose";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTokenIssuer, type TokenIssuer } from "./domain/token-issuer.js";
import { createIdentity, type Identity, settingsOf } from "./identity.js";
import {
  ensureIdentityIndexes,
  type IdentityCollections,
  identityCollections,
  type Role,
  type UserDoc,
} from "./store/identity-store.js";

const T0 = new Date("2025-03-01T09:00:00.000Z");
const PASSWORD = "correct-horse-battery";
const API_KEY = /^sk_([0-9a-f]{32})_([0-9A-Za-z]+)$/;

let issuer: TokenIssuer;
beforeAll(async () => {
  issuer = await createTokenIssuer({ issuer: "kiln-test", audience: "kiln-api", ttlSeconds: 600 });
});

// Fresh for every test: its own store, and a clock that stands still until a test moves it.
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

/** The domain error `p` rejects with; fails the test when it resolves or throws anything else. */
async function rejectionOf(p: Promise<unknown>): Promise<DomainError> {
  const error = await p.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

async function expectKind(p: Promise<unknown>, kind: ErrorKind, details?: FieldIssue[]): Promise<DomainError> {
  const error = await rejectionOf(p);
  expect(error.kind).toBe(kind);
  if (details) expect(error.details).toEqual(details);
  return error;
}

/** A user without a password login, for the tests that are not about signing in. */
async function createUser(fullName = "Test User"): Promise<UserDoc> {
  const id = newId("usr");
  const user: UserDoc = { _id: id, email: `${id}@example.com`, fullName, createdAt: T0, updatedAt: T0 };
  await c.users.insertOne(user);
  return user;
}

/** A user who completed onboarding: the owner of a new organization. */
async function createOwner(organizationName = "Acme") {
  const user = await createUser();
  const { organization } = await identity.completeOnboarding(user._id, { fullName: "Owner", organizationName });
  return { userId: user._id, organizationId: organization._id };
}

/** Another user, made a member of `organizationId` with `role` (and its permissions unless given). */
async function addMember(organizationId: string, role: Role, permissions?: string[]): Promise<string> {
  const user = await createUser();
  const defaults: Record<string, string[]> = {
    owner: ["ai_platform", "manage_api_keys"],
    admin: ["ai_platform", "manage_api_keys"],
    member: ["ai_platform"],
  };
  await c.memberships.insertOne({
    _id: `${organizationId}:${user._id}`,
    organizationId,
    userId: user._id,
    role,
    permissions: permissions ?? defaults[role] ?? ["ai_platform"],
    createdAt: T0,
  });
  return user._id;
}

async function createKey(userId: string, organizationId: string, scopes = ["prompts:read"]) {
  return identity.createApiKey(userId, { organizationId, name: "ci", scopes });
}

async function disableAi(organizationId: string): Promise<void> {
  const r = await c.organizations.updateOne({ _id: organizationId }, { $set: { "entitlements.aiEnabled": false } });
  expect(r.modifiedCount).toBe(1);
}

describe("signUp", () => {
  it("creates a user with the e-mail address trimmed and lower-cased", async () => {
    const { user } = await identity.signUp({
      email: "  Ada.Lovelace@Example.COM ",
      password: PASSWORD,
      fullName: " Ada ",
    });
    expect(user).toMatchObject({ email: "ada.lovelace@example.com", fullName: "Ada", createdAt: T0 });
    expect(user._id).toMatch(/^usr_[0-9a-f]{32}$/);
    expect(await c.users.findOne({ _id: user._id })).toEqual(user);
    const login = await c.passwordLogins.findOne({ _id: "ada.lovelace@example.com" });
    expect(login?.userId).toBe(user._id);
  });

  it("stores a scrypt hash of the password, never the password", async () => {
    await identity.signUp({ email: "ada@example.com", password: PASSWORD, fullName: "" });
    const login = await c.passwordLogins.findOne({ _id: "ada@example.com" });
    expect(login?.passwordHash).toMatch(/^scrypt\$/);
    expect(JSON.stringify(login)).not.toContain(PASSWORD);
  });

  it("returns an access token of the built-in issuer for the new user", async () => {
    const { user, accessToken, expiresAt } = await identity.signUp({
      email: "ada@example.com",
      password: PASSWORD,
      fullName: "",
    });
    const { payload, protectedHeader } = await jwtVerify(accessToken, createLocalJWKSet(issuer.jwks), {
      issuer: "kiln-test",
      audience: "kiln-api",
    });
    expect(payload.sub).toBe(user._id);
    expect(protectedHeader.typ).toBe("at+jwt");
    expect(expiresAt.getTime()).toBe((payload.exp ?? 0) * 1000);
  });

  it("refuses a second account for the same address, whatever its case", async () => {
    await identity.signUp({ email: "ada@example.com", password: PASSWORD, fullName: "" });
    await expectKind(
      identity.signUp({ email: " ADA@example.com", password: "another-password", fullName: "" }),
      "already_exists",
      [{ field: "email", issue: "is taken" }],
    );
    expect(await c.users.countDocuments({})).toBe(1);
  });

  it("creates one account for two concurrent sign-ups with one address", async () => {
    const results = await Promise.allSettled([
      identity.signUp({ email: "ada@example.com", password: PASSWORD, fullName: "A" }),
      identity.signUp({ email: "ada@example.com", password: PASSWORD, fullName: "B" }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const rejected = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(rejected?.reason).toMatchObject({ kind: "already_exists" });
    // The loser's user document was removed again.
    expect(await c.users.countDocuments({})).toBe(1);
    expect(await c.passwordLogins.countDocuments({})).toBe(1);
  });

  it("refuses a bad e-mail address and a short password together, with a detail for each", async () => {
    await expectKind(
      identity.signUp({ email: "not-an-address", password: "short", fullName: "" }),
      "invalid_argument",
      [
        { field: "email", issue: "must be an e-mail address" },
        { field: "password", issue: "must be at least 8 characters" },
      ],
    );
    expect(await c.users.countDocuments({})).toBe(0);
    expect(await c.passwordLogins.countDocuments({})).toBe(0);
  });

  it("refuses a full name over 200 characters", async () => {
    await expectKind(
      identity.signUp({ email: "ada@example.com", password: PASSWORD, fullName: "x".repeat(201) }),
      "invalid_argument",
      [{ field: "fullName", issue: "must be at most 200 characters" }],
    );
  });
});

describe("issueToken", () => {
  it("issues a token for the right password, whatever the case of the address", async () => {
    const { user } = await identity.signUp({ email: "ada@example.com", password: PASSWORD, fullName: "" });
    const { accessToken } = await identity.issueToken({ email: " Ada@Example.com ", password: PASSWORD });
    const { payload } = await jwtVerify(accessToken, createLocalJWKSet(issuer.jwks), {
      issuer: "kiln-test",
      audience: "kiln-api",
    });
    expect(payload.sub).toBe(user._id);
  });

  it("refuses a wrong password and an unknown address alike", async () => {
    await identity.signUp({ email: "ada@example.com", password: PASSWORD, fullName: "" });
    const wrong = await expectKind(
      identity.issueToken({ email: "ada@example.com", password: `${PASSWORD}!` }),
      "unauthenticated",
    );
    const unknown = await expectKind(
      identity.issueToken({ email: "bob@example.com", password: PASSWORD }),
      "unauthenticated",
    );
    // The same answer, so the error does not tell which addresses have accounts.
    expect(unknown.message).toBe(wrong.message);
  });
});

describe("resolveExternalUser", () => {
  const subject = {
    issuer: "https://login.example.com",
    subject: "auth0|42",
    email: " Ada@Example.com ",
    fullName: " Ada ",
  };

  it("makes a user of an unknown subject on first sight, and finds the same user afterwards", async () => {
    const first = await identity.resolveExternalUser(subject);
    expect(first).toMatchObject({ email: "ada@example.com", fullName: "Ada", createdAt: T0 });
    const again = await identity.resolveExternalUser({ ...subject, email: "changed@example.com" });
    expect(again).toEqual(first);
    expect(await c.users.countDocuments({})).toBe(1);
  });

  it("keeps subjects of different issuers apart", async () => {
    const a = await identity.resolveExternalUser(subject);
    const b = await identity.resolveExternalUser({ ...subject, issuer: "https://other.example.com" });
    expect(a._id).not.toBe(b._id);
  });

  it("makes one user for two concurrent first sightings", async () => {
    const [a, b] = await Promise.all([identity.resolveExternalUser(subject), identity.resolveExternalUser(subject)]);
    expect(a._id).toBe(b._id);
    expect(await c.users.countDocuments({})).toBe(1);
  });

  it("refuses a blank issuer or subject", async () => {
    await expectKind(identity.resolveExternalUser({ ...subject, issuer: " ", subject: "" }), "invalid_argument", [
      { field: "issuer", issue: "is required" },
      { field: "subject", issue: "is required" },
    ]);
  });
});

describe("completeOnboarding", () => {
  it("creates a Free organization with AI enabled and makes the user its owner", async () => {
    const user = await createUser("Old Name");
    const r = await identity.completeOnboarding(user._id, {
      fullName: " Ada Lovelace ",
      organizationName: " Analytical ",
    });
    expect(r.created).toBe(true);
    expect(r.organization).toMatchObject({ name: "Analytical", plan: "free", createdAt: T0 });
    expect(r.organization._id).toMatch(/^org_[0-9a-f]{32}$/);
    expect(r.organization.entitlements.aiEnabled).toBe(true);
    expect(r.membership).toMatchObject({
      _id: `${r.organization._id}:${user._id}`,
      organizationId: r.organization._id,
      userId: user._id,
      role: "owner",
    });
    expect(r.membership.permissions).toContain("ai_platform");
    expect(r.user.fullName).toBe("Ada Lovelace");
    // What it returned is what it stored.
    expect(await c.organizations.findOne({ _id: r.organization._id })).toEqual(r.organization);
    expect(await c.memberships.findOne({ _id: r.membership._id })).toEqual(r.membership);
    expect((await c.users.findOne({ _id: user._id }))?.fullName).toBe("Ada Lovelace");
  });

  it("returns the same organization on a repeat call", async () => {
    const user = await createUser();
    const first = await identity.completeOnboarding(user._id, { fullName: "Ada", organizationName: "First" });
    clock.now = new Date(T0.getTime() + 60_000);
    const again = await identity.completeOnboarding(user._id, { fullName: "Someone Else", organizationName: "Second" });
    expect(again.created).toBe(false);
    expect(again.organization).toEqual(first.organization);
    expect(again.membership).toEqual(first.membership);
    expect(again.user.fullName).toBe("Ada");
    expect(await c.organizations.countDocuments({})).toBe(1);
    expect(await c.memberships.countDocuments({})).toBe(1);
  });

  it("creates one organization for two concurrent calls of one user", async () => {
    const user = await createUser();
    const results = await Promise.all([
      identity.completeOnboarding(user._id, { fullName: "Ada", organizationName: "One" }),
      identity.completeOnboarding(user._id, { fullName: "Ada", organizationName: "Two" }),
    ]);
    expect(results[0].organization._id).toBe(results[1].organization._id);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await c.organizations.countDocuments({})).toBe(1);
    expect(await c.memberships.countDocuments({})).toBe(1);
    expect(await c.onboardings.countDocuments({})).toBe(1);
  });

  it("gives each user their own organization", async () => {
    const a = await createOwner("A");
    const b = await createOwner("B");
    expect(a.organizationId).not.toBe(b.organizationId);
    expect(await c.organizations.countDocuments({})).toBe(2);
  });

  it("finishes an onboarding that stopped after writing its record", async () => {
    const user = await createUser();
    const organizationId = newId("org");
    await c.onboardings.insertOne({ _id: user._id, organizationId, organizationName: "Half Done", createdAt: T0 });
    const r = await identity.completeOnboarding(user._id, { fullName: "Ada", organizationName: "Ignored" });
    expect(r.organization).toMatchObject({ _id: organizationId, name: "Half Done", plan: "free" });
    expect(r.membership.role).toBe("owner");
    expect(await c.organizations.countDocuments({})).toBe(1);
  });

  it("refuses blank names with a detail for each and writes nothing", async () => {
    const user = await createUser();
    await expectKind(
      identity.completeOnboarding(user._id, { fullName: " ", organizationName: "" }),
      "invalid_argument",
      [
        { field: "fullName", issue: "is required" },
        { field: "organizationName", issue: "is required" },
      ],
    );
    await expectKind(
      identity.completeOnboarding(user._id, { fullName: "Ada", organizationName: "x".repeat(201) }),
      "invalid_argument",
      [{ field: "organizationName", issue: "must be at most 200 characters" }],
    );
    expect(await c.onboardings.countDocuments({})).toBe(0);
    expect(await c.organizations.countDocuments({})).toBe(0);
  });

  it("refuses an unknown user", async () => {
    await expectKind(
      identity.completeOnboarding(newId("usr"), { fullName: "Ada", organizationName: "Acme" }),
      "unauthenticated",
    );
    expect(await c.organizations.countDocuments({})).toBe(0);
  });
});

describe("createApiKey", () => {
  it("returns the key once, shaped sk_<32 hex>_<secret>", async () => {
    const { userId, organizationId } = await createOwner();
    const { apiKey, key } = await identity.createApiKey(userId, {
      organizationId,
      name: " deploy bot ",
      scopes: ["prompts:read", "runs:write"],
    });
    const m = API_KEY.exec(key);
    expect(m?.[1]).toBe(apiKey._id.slice("key_".length));
    expect(apiKey).toMatchObject({
      organizationId,
      name: "deploy bot",
      scopes: ["prompts:read", "runs:write"],
      createdByUserId: userId,
      createdAt: T0,
      revokedAt: null,
    });
  });

  it("stores only a hash of the secret", async () => {
    const { userId, organizationId } = await createOwner();
    const { apiKey, key } = await createKey(userId, organizationId);
    const secret = API_KEY.exec(key)?.[2] ?? "";
    expect(secret.length).toBeGreaterThanOrEqual(22);
    const stored = await c.apiKeys.findOne({ _id: apiKey._id });
    expect(Object.keys(stored ?? {}).sort()).toEqual(
      ["_id", "createdAt", "createdByUserId", "name", "organizationId", "revokedAt", "scopes", "secretHash"].sort(),
    );
    expect(stored?.secretHash).toBe(createHash("sha256").update(secret).digest("hex"));
    const text = JSON.stringify(stored);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(key);
  });

  it("lets an admin create a key", async () => {
    const { organizationId } = await createOwner();
    const adminId = await addMember(organizationId, "admin");
    const { apiKey } = await createKey(adminId, organizationId);
    expect(apiKey.createdByUserId).toBe(adminId);
  });

  it("refuses a plain member", async () => {
    const { organizationId } = await createOwner();
    const memberId = await addMember(organizationId, "member");
    await expectKind(createKey(memberId, organizationId), "permission_denied");
    expect(await c.apiKeys.countDocuments({})).toBe(0);
  });

  it("answers not_found to the owner of another organization", async () => {
    const { organizationId } = await createOwner("A");
    const other = await createOwner("B");
    await expectKind(createKey(other.userId, organizationId), "not_found");
    await expectKind(createKey(other.userId, newId("org")), "not_found");
    expect(await c.apiKeys.countDocuments({})).toBe(0);
  });

  it("refuses a blank name, no scopes and unknown scopes, with a detail for each", async () => {
    const { userId, organizationId } = await createOwner();
    await expectKind(identity.createApiKey(userId, { organizationId, name: " ", scopes: [] }), "invalid_argument", [
      { field: "name", issue: "is required" },
      { field: "scopes", issue: "must name at least one scope" },
    ]);
    await expectKind(
      identity.createApiKey(userId, { organizationId, name: "ci", scopes: ["prompts:read", "admin"] }),
      "invalid_argument",
      [{ field: "scopes[1]", issue: 'unknown scope "admin"' }],
    );
    expect(await c.apiKeys.countDocuments({})).toBe(0);
  });

  it("stores each scope once", async () => {
    const { userId, organizationId } = await createOwner();
    const { apiKey } = await createKey(userId, organizationId, ["runs:read", "runs:read", "tools:read"]);
    expect(apiKey.scopes).toEqual(["runs:read", "tools:read"]);
  });
});

describe("listApiKeys", () => {
  it("lists the keys newest first, a page at a time", async () => {
    const { userId, organizationId } = await createOwner();
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await createKey(userId, organizationId)).apiKey._id);
    const seen: string[] = [];
    const pageSizes: number[] = [];
    let cursor = "";
    do {
      const page = await identity.listApiKeys(userId, { organizationId, limit: 2, cursor });
      pageSizes.push(page.items.length);
      seen.push(...page.items.map((k) => k._id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(pageSizes).toEqual([2, 2, 1]);
    expect(seen).toEqual([...created].reverse());
  });

  it("returns no cursor when everything fits on one page", async () => {
    const { userId, organizationId } = await createOwner();
    await createKey(userId, organizationId);
    await createKey(userId, organizationId);
    const page = await identity.listApiKeys(userId, { organizationId, limit: 0, cursor: "" });
    expect(page.items).toHaveLength(2);
    expect(page.nextCursor).toBe("");
  });

  it("lists only the organization's own keys, revoked ones included", async () => {
    const a = await createOwner("A");
    const b = await createOwner("B");
    const mine = await createKey(a.userId, a.organizationId);
    const revoked = await createKey(a.userId, a.organizationId);
    await identity.revokeApiKey(a.userId, revoked.apiKey._id);
    await createKey(b.userId, b.organizationId);
    const page = await identity.listApiKeys(a.userId, { organizationId: a.organizationId, limit: 50, cursor: "" });
    expect(page.items.map((k) => k._id)).toEqual([revoked.apiKey._id, mine.apiKey._id]);
    expect(page.items[0]?.revokedAt).toEqual(T0);
  });

  it("answers not_found to a member of another organization", async () => {
    const a = await createOwner("A");
    const b = await createOwner("B");
    await createKey(a.userId, a.organizationId);
    await expectKind(
      identity.listApiKeys(b.userId, { organizationId: a.organizationId, limit: 50, cursor: "" }),
      "not_found",
    );
  });

  it("refuses a plain member", async () => {
    const { organizationId } = await createOwner();
    const memberId = await addMember(organizationId, "member");
    await expectKind(identity.listApiKeys(memberId, { organizationId, limit: 50, cursor: "" }), "permission_denied");
  });

  it("refuses a bad limit and a cursor it did not hand out", async () => {
    const { userId, organizationId } = await createOwner();
    for (const limit of [-1, 201, 1.5]) {
      await expectKind(identity.listApiKeys(userId, { organizationId, limit, cursor: "" }), "invalid_argument");
    }
    await expectKind(
      identity.listApiKeys(userId, { organizationId, limit: 10, cursor: "garbage" }),
      "invalid_argument",
      [{ field: "cursor", issue: "is not a cursor this list returned" }],
    );
  });
});

describe("revokeApiKey", () => {
  it("sets revokedAt, after which verifyApiKey refuses the key", async () => {
    const { userId, organizationId } = await createOwner();
    const { apiKey, key } = await createKey(userId, organizationId);
    expect((await identity.verifyApiKey(key)).id).toBe(apiKey._id);
    const revokedAt = new Date(T0.getTime() + 5_000);
    clock.now = revokedAt;
    const revoked = await identity.revokeApiKey(userId, apiKey._id);
    expect(revoked).toEqual({ ...apiKey, revokedAt });
    expect((await c.apiKeys.findOne({ _id: apiKey._id }))?.revokedAt).toEqual(revokedAt);
    await expectKind(identity.verifyApiKey(key), "unauthenticated");
  });

  it("keeps the first revocation time on a repeat call", async () => {
    const { userId, organizationId } = await createOwner();
    const { apiKey } = await createKey(userId, organizationId);
    await identity.revokeApiKey(userId, apiKey._id);
    clock.now = new Date(T0.getTime() + 60_000);
    expect((await identity.revokeApiKey(userId, apiKey._id)).revokedAt).toEqual(T0);
  });

  it("lets an admin revoke a key the owner made", async () => {
    const { userId, organizationId } = await createOwner();
    const adminId = await addMember(organizationId, "admin");
    const { apiKey } = await createKey(userId, organizationId);
    expect((await identity.revokeApiKey(adminId, apiKey._id)).revokedAt).toEqual(T0);
  });

  it("answers not_found to a member of another organization and leaves the key working", async () => {
    const a = await createOwner("A");
    const b = await createOwner("B");
    const { apiKey, key } = await createKey(a.userId, a.organizationId);
    const hidden = await expectKind(identity.revokeApiKey(b.userId, apiKey._id), "not_found");
    // The same answer as for a key that does not exist, so the key's existence does not leak.
    const unknown = await expectKind(identity.revokeApiKey(b.userId, newId("key")), "not_found");
    expect(hidden.message).toBe(unknown.message);
    expect((await c.apiKeys.findOne({ _id: apiKey._id }))?.revokedAt).toBeNull();
    expect((await identity.verifyApiKey(key)).id).toBe(apiKey._id);
  });

  it("refuses a plain member of the key's organization", async () => {
    const { userId, organizationId } = await createOwner();
    const memberId = await addMember(organizationId, "member");
    const { apiKey } = await createKey(userId, organizationId);
    await expectKind(identity.revokeApiKey(memberId, apiKey._id), "permission_denied");
    expect((await c.apiKeys.findOne({ _id: apiKey._id }))?.revokedAt).toBeNull();
  });

  it("answers not_found for an unknown key", async () => {
    const { userId } = await createOwner();
    await expectKind(identity.revokeApiKey(userId, newId("key")), "not_found");
  });
});

describe("verifyApiKey", () => {
  it("returns the api_key principal of a valid key", async () => {
    const { userId, organizationId } = await createOwner();
    const { apiKey, key } = await createKey(userId, organizationId, ["tools:read", "runs:write"]);
    expect(await identity.verifyApiKey(key)).toEqual({
      type: "api_key",
      id: apiKey._id,
      organizationId,
      scopes: ["tools:read", "runs:write"],
    });
  });

  it("refuses a forged secret for a real key id", async () => {
    const { userId, organizationId } = await createOwner();
    const { key } = await createKey(userId, organizationId);
    const [, hex, secret] = API_KEY.exec(key) ?? [];
    const forged = `sk_${hex}_${secret?.slice(0, -1)}${secret?.endsWith("a") ? "b" : "a"}`;
    await expectKind(identity.verifyApiKey(forged), "unauthenticated");
  });

  it("refuses an unknown key id with a well-formed secret", async () => {
    const { userId, organizationId } = await createOwner();
    const { key } = await createKey(userId, organizationId);
    const secret = API_KEY.exec(key)?.[2];
    await expectKind(identity.verifyApiKey(`sk_${newId("key").slice(4)}_${secret}`), "unauthenticated");
  });

  it.each([
    ["empty", ""],
    ["not a key", "hello"],
    ["a token", "eyJhbGciOiJIUzI1NiJ9.e30.sig"],
    ["no secret", `sk_${"0".repeat(32)}_`],
  ])("refuses a malformed key (%s)", async (_, key) => {
    await expectKind(identity.verifyApiKey(key), "unauthenticated");
  });

  it("refuses a real key with anything appended", async () => {
    const { userId, organizationId } = await createOwner();
    const { key } = await createKey(userId, organizationId);
    await expectKind(identity.verifyApiKey(`${key} `), "unauthenticated");
    await expectKind(identity.verifyApiKey(`${key}-x`), "unauthenticated");
  });
});

describe("authorize", () => {
  const ai = (organizationId: string) => ({ organizationId, requireAi: true, scope: "prompts:read" });

  describe("for a user", () => {
    it("lets a member act with their membership", async () => {
      const { userId, organizationId } = await createOwner();
      const r = await identity.authorize({ type: "user", id: userId }, ai(organizationId));
      expect(r.organization._id).toBe(organizationId);
      expect(r.membership?.role).toBe("owner");
    });

    it("lets a plain member act too: every role has the AI platform", async () => {
      const { organizationId } = await createOwner();
      const memberId = await addMember(organizationId, "member");
      expect((await identity.authorize({ type: "user", id: memberId }, ai(organizationId))).membership?.role).toBe(
        "member",
      );
    });

    it("answers not_found to a non-member", async () => {
      const { organizationId } = await createOwner("A");
      const stranger = await createOwner("B");
      await expectKind(identity.authorize({ type: "user", id: stranger.userId }, ai(organizationId)), "not_found");
      await expectKind(
        identity.authorize({ type: "user", id: stranger.userId }, { organizationId, requireAi: false, scope: "" }),
        "not_found",
      );
    });

    it("answers not_found for an unknown organization", async () => {
      const { userId } = await createOwner();
      await expectKind(identity.authorize({ type: "user", id: userId }, ai(newId("org"))), "not_found");
    });

    it("refuses AI work when the organization's aiEnabled is false", async () => {
      const { userId, organizationId } = await createOwner();
      await disableAi(organizationId);
      await expectKind(identity.authorize({ type: "user", id: userId }, ai(organizationId)), "permission_denied");
      // Work that does not need AI is still allowed.
      await identity.authorize({ type: "user", id: userId }, { organizationId, requireAi: false, scope: "" });
    });

    it("refuses AI work to a member without the ai_platform permission", async () => {
      const { organizationId } = await createOwner();
      const memberId = await addMember(organizationId, "member", []);
      await expectKind(identity.authorize({ type: "user", id: memberId }, ai(organizationId)), "permission_denied");
      await identity.authorize({ type: "user", id: memberId }, { organizationId, requireAi: false, scope: "" });
    });
  });

  describe("for an API key", () => {
    async function keyPrincipal(scopes = ["prompts:read"]) {
      const owner = await createOwner();
      const { key } = await createKey(owner.userId, owner.organizationId, scopes);
      return { ...owner, principal: await identity.verifyApiKey(key) };
    }

    it("lets a key act in its organization with a scope it holds", async () => {
      const { organizationId, principal } = await keyPrincipal();
      const r = await identity.authorize(principal, ai(organizationId));
      expect(r.organization._id).toBe(organizationId);
      expect(r.membership).toBeNull();
    });

    it("lets a key act without a scope when none is asked for", async () => {
      const { organizationId, principal } = await keyPrincipal(["runs:read"]);
      await identity.authorize(principal, { organizationId, requireAi: true, scope: "" });
    });

    it("refuses a key in another organization", async () => {
      const { principal } = await keyPrincipal();
      const other = await createOwner("Other");
      await expectKind(identity.authorize(principal, ai(other.organizationId)), "permission_denied");
    });

    it("refuses a key without the scope", async () => {
      const { organizationId, principal } = await keyPrincipal(["prompts:read"]);
      await expectKind(
        identity.authorize(principal, { organizationId, requireAi: true, scope: "prompts:write" }),
        "permission_denied",
      );
    });

    it("refuses AI work when the organization's aiEnabled is false", async () => {
      const { organizationId, principal } = await keyPrincipal();
      await disableAi(organizationId);
      await expectKind(identity.authorize(principal, ai(organizationId)), "permission_denied");
    });

    it("refuses a key as soon as it is revoked", async () => {
      const { userId, organizationId, principal } = await keyPrincipal();
      await identity.revokeApiKey(userId, principal.id);
      // The principal was established before the revocation (a forwarded token, say).
      await expectKind(identity.authorize(principal, ai(organizationId)), "unauthenticated");
    });

    it("answers not_found for an unknown organization", async () => {
      const { principal } = await keyPrincipal();
      await expectKind(identity.authorize(principal, ai(newId("org"))), "not_found");
    });
  });
});

describe("verifySetup", () => {
  const user = (id: string): Principal => ({ type: "user", id });
  const checksOf = (r: { checks: { name: string; ok: boolean }[] }) => r.checks.map((ch) => [ch.name, ch.ok]);

  async function keyOf(owner: { userId: string; organizationId: string }) {
    const { key } = await createKey(owner.userId, owner.organizationId);
    return identity.verifyApiKey(key);
  }

  it("passes every check for an owner naming their organization", async () => {
    const { userId, organizationId } = await createOwner();
    const r = await identity.verifySetup(user(userId), organizationId);
    expect(r.ok).toBe(true);
    expect(r.principal).toEqual(user(userId));
    expect(r.organization?._id).toBe(organizationId);
    expect(checksOf(r)).toEqual([
      ["authentication", true],
      ["organization", true],
      ["ai_entitlement", true],
      ["ai_permission", true],
    ]);
  });

  it("uses the user's first organization when none is named", async () => {
    const first = await createOwner("First");
    const second = await createOwner("Second");
    // The owner of "First" also joins "Second", later.
    await c.memberships.insertOne({
      _id: `${second.organizationId}:${first.userId}`,
      organizationId: second.organizationId,
      userId: first.userId,
      role: "member",
      permissions: ["ai_platform"],
      createdAt: new Date(T0.getTime() + 1_000),
    });
    const r = await identity.verifySetup(user(first.userId), "");
    expect(r.ok).toBe(true);
    expect(r.organization?._id).toBe(first.organizationId);
  });

  it("fails the organization check for a user without an organization", async () => {
    const lone = await createUser();
    const r = await identity.verifySetup(user(lone._id), "");
    expect(r.ok).toBe(false);
    expect(r.organization).toBeNull();
    expect(checksOf(r)).toEqual([
      ["authentication", true],
      ["organization", false],
    ]);
    expect(r.checks[1]?.message).toMatch(/onboarding/);
  });

  it("fails the organization check for an organization the user is no member of", async () => {
    const { organizationId } = await createOwner("A");
    const stranger = await createOwner("B");
    for (const orgId of [organizationId, newId("org")]) {
      const r = await identity.verifySetup(user(stranger.userId), orgId);
      expect(r.ok).toBe(false);
      expect(r.organization).toBeNull();
      expect(checksOf(r)).toEqual([
        ["authentication", true],
        ["organization", false],
      ]);
    }
  });

  it("fails the entitlement check when the organization's aiEnabled is false", async () => {
    const { userId, organizationId } = await createOwner();
    await disableAi(organizationId);
    const r = await identity.verifySetup(user(userId), organizationId);
    expect(r.ok).toBe(false);
    expect(r.organization?._id).toBe(organizationId);
    expect(checksOf(r)).toEqual([
      ["authentication", true],
      ["organization", true],
      ["ai_entitlement", false],
      ["ai_permission", true],
    ]);
  });

  it("fails the permission check for a member without ai_platform", async () => {
    const { organizationId } = await createOwner();
    const memberId = await addMember(organizationId, "member", []);
    const r = await identity.verifySetup(user(memberId), organizationId);
    expect(r.ok).toBe(false);
    expect(checksOf(r)).toEqual([
      ["authentication", true],
      ["organization", true],
      ["ai_entitlement", true],
      ["ai_permission", false],
    ]);
  });

  it("passes every check for an API key, with or without its organization named", async () => {
    const owner = await createOwner();
    const principal = await keyOf(owner);
    for (const orgId of ["", owner.organizationId]) {
      const r = await identity.verifySetup(principal, orgId);
      expect(r.ok).toBe(true);
      expect(r.principal).toEqual(principal);
      expect(r.organization?._id).toBe(owner.organizationId);
      expect(checksOf(r)).toEqual([
        ["authentication", true],
        ["organization", true],
        ["ai_entitlement", true],
        ["ai_permission", true],
      ]);
    }
  });

  it("fails the organization check for an API key naming another organization", async () => {
    const owner = await createOwner("A");
    const other = await createOwner("B");
    const r = await identity.verifySetup(await keyOf(owner), other.organizationId);
    expect(r.ok).toBe(false);
    expect(r.organization).toBeNull();
    expect(checksOf(r)).toEqual([
      ["authentication", true],
      ["organization", false],
    ]);
  });

  it("fails the entitlement check for an API key when aiEnabled is false", async () => {
    const owner = await createOwner();
    const principal = await keyOf(owner);
    await disableAi(owner.organizationId);
    const r = await identity.verifySetup(principal, "");
    expect(r.ok).toBe(false);
    expect(checksOf(r)).toEqual([
      ["authentication", true],
      ["organization", true],
      ["ai_entitlement", false],
      ["ai_permission", true],
    ]);
  });
});

describe("organization settings and members", () => {
  it("defaults the protected labels to production; owners and admins change them, members may not", async () => {
    const { userId, organizationId } = await createOwner();
    const seen = await identity.getOrganization({ type: "user", id: userId }, organizationId);
    expect(settingsOf(seen.organization)).toEqual({ protectedLabels: ["production"], auditRetentionDays: 365 });
    const memberId = await addMember(organizationId, "member");
    const adminId = await addMember(organizationId, "admin");
    await expectKind(
      identity.updateOrganization(memberId, { organizationId: organizationId, protectedLabels: [] }),
      "permission_denied",
    );
    await expectKind(
      identity.updateOrganization(adminId, { organizationId: organizationId, protectedLabels: ["Prod", "draft"] }),
      "invalid_argument",
      [
        { field: "settings.protectedLabels[0]", issue: "must match ^[a-z][a-z0-9-]{0,39}$" },
        { field: "settings.protectedLabels[1]", issue: '"draft" is reserved (an evaluation target)' },
      ],
    );
    const changed = await identity.updateOrganization(adminId, {
      organizationId: organizationId,
      protectedLabels: ["staging", "staging"],
    });
    expect(settingsOf(changed)).toEqual({ protectedLabels: ["staging"], auditRetentionDays: 365 });
    // What authorize answers (and the catalog reads) follows.
    const decision = await identity.authorize(
      { type: "user", id: memberId },
      {
        organizationId: organizationId,
        requireAi: true,
        scope: "",
      },
    );
    expect(settingsOf(decision.organization).protectedLabels).toEqual(["staging"]);
    // Other organizations' users do not see it; a key sees its own.
    const stranger = await createOwner("Other");
    await expectKind(identity.getOrganization({ type: "user", id: stranger.userId }, organizationId), "not_found");
  });

  it("adds signed-up users with a role: admins add members, only owners add owners, twice is 409", async () => {
    const { userId, organizationId } = await createOwner();
    const adminId = await addMember(organizationId, "admin");
    const newcomer = await createUser("New");
    const added = await identity.addMember(adminId, {
      organizationId: organizationId,
      email: newcomer.email.toUpperCase(),
      role: "member",
    });
    expect(added.membership).toMatchObject({ userId: newcomer._id, role: "member", permissions: ["ai_platform"] });
    await expectKind(
      identity.addMember(adminId, { organizationId: organizationId, email: newcomer.email, role: "member" }),
      "already_exists",
    );
    const another = await createUser();
    await expectKind(
      identity.addMember(adminId, { organizationId: organizationId, email: another.email, role: "owner" }),
      "permission_denied",
    );
    await expectKind(
      identity.addMember(newcomer._id, { organizationId: organizationId, email: another.email, role: "member" }),
      "permission_denied",
    );
    await expectKind(
      identity.addMember(userId, { organizationId: organizationId, email: "nobody@example.com", role: "member" }),
      "not_found",
    );
    await expectKind(
      identity.addMember(userId, { organizationId: organizationId, email: another.email, role: "boss" }),
      "invalid_argument",
    );
    const members = await identity.listMembers(
      { type: "user", id: newcomer._id },
      { organizationId: organizationId, limit: 0, cursor: "" },
    );
    expect(members.items.map((m) => m.membership.role).sort()).toEqual(["admin", "member", "owner"]);
  });
});
