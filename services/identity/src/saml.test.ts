/**
 * SAML sign-in in the identity use cases (issue #51, docs/security.md "SAML sign-in"): the
 * settings' rules, each refusal naming its field; settings scoped to their organization and to its
 * owners and admins; the role from the attribute through the mapping; the sign-in state taken
 * once; a replayed assertion refused with nothing changed; users made just in time, and an IdP
 * never taking over an account that signs in another way. On the in-memory store.
 */
import { DomainError, type ErrorKind } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { type KeyPair, selfSignedKeyPair } from "@kiln/testing/saml-idp";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { highestMappedRole } from "./domain/mapped-roles.js";
import { checkSamlSettings, type SamlSettingsInput, ssoUrlIssue } from "./domain/saml-settings.js";
import { createTokenIssuer, type TokenIssuer } from "./domain/token-issuer.js";
import { createIdentity, type Identity } from "./identity.js";
import { ensureIdentityIndexes, type IdentityCollections, identityCollections } from "./store/identity-store.js";

let issuer: TokenIssuer;
let keys: KeyPair;
beforeAll(async () => {
  issuer = await createTokenIssuer({ issuer: "kiln-test", audience: "kiln-api", ttlSeconds: 600 });
  keys = await selfSignedKeyPair();
});

let c: IdentityCollections;
let identity: Identity;
let clock: Date;
beforeEach(async () => {
  const store = createMemoryStore();
  await ensureIdentityIndexes(store);
  c = identityCollections(store);
  clock = new Date();
  identity = createIdentity({ collections: c, issuer, now: () => clock });
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

const settings = (over: Partial<SamlSettingsInput> = {}): SamlSettingsInput => ({
  enabled: true,
  idpEntityId: "http://www.okta.com/exk1",
  idpSsoUrl: "https://acme.okta.com/app/kiln/exk1/sso/saml",
  idpCertificate: keys.certificate,
  roleAttribute: "groups",
  roleMapping: { "Kiln Admins": "admin", engineers: "member" },
  defaultRole: "member",
  allowIdpInitiated: false,
  ...over,
});

async function organization() {
  const email = `${newId("usr")}@example.com`;
  const { user } = await identity.signUp({ email, password: "correct-horse-battery", fullName: "Owner" });
  const { organization: org } = await identity.completeOnboarding(user._id, { fullName: "O", organizationName: "Org" });
  return { ownerId: user._id, organizationId: org._id, email };
}

const signIn = (organizationId: string, email: string, roleValues: string[] = [], assertionId = newId("req")) =>
  identity.completeSamlSignIn({ organizationId, assertionId, email, fullName: "Ada", roleValues });

describe("the settings' rules", () => {
  it("takes good settings, with the certificate's fingerprint and lower-cased mapping values", () => {
    const s = checkSamlSettings(settings(), new Date());
    expect(s.certificateFingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(s.certificateSubject).toContain("Kiln test IdP");
    expect(s.roleMapping).toEqual([
      { value: "kiln admins", role: "admin" },
      { value: "engineers", role: "member" },
    ]);
  });

  it("takes the certificate's bare base64 body, as Entra shows it", () => {
    const body = keys.certificate.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "");
    expect(checkSamlSettings(settings({ idpCertificate: body }), new Date()).certificateFingerprint).toBe(
      checkSamlSettings(settings(), new Date()).certificateFingerprint,
    );
  });

  it.each([
    [{ idpEntityId: "" }, "idpEntityId", "is required"],
    [{ idpSsoUrl: "not a url" }, "idpSsoUrl", "must be an absolute URL"],
    [{ idpSsoUrl: "http://idp.example/sso" }, "idpSsoUrl", "must be an https URL"],
    [{ idpCertificate: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----" }, "idpCertificate", "not a PEM"],
    [{ idpCertificate: "" }, "idpCertificate", "is required"],
    [{ roleMapping: { owners: "owner" } }, "roleMapping.owners", "never gives the owner role"],
    [{ defaultRole: "owner" }, "defaultRole", "never gives the owner role"],
    [{ roleAttribute: "", roleMapping: { a: "admin" } }, "roleAttribute", "is required with a roleMapping"],
  ])("refuses %j naming %s", (over, field, issue) => {
    const error = (() => {
      try {
        checkSamlSettings(settings(over), new Date());
      } catch (e) {
        return e as DomainError;
      }
      throw new Error("accepted");
    })();
    expect(error.kind).toBe("invalid_argument");
    expect(error.details.find((d) => d.field === field)?.issue).toContain(issue);
  });

  it("refuses an expired certificate", async () => {
    const later = new Date(Date.now() + 40 * 86_400_000);
    expect(() => checkSamlSettings(settings(), later)).toThrow(DomainError);
  });

  it("takes http for loopback hosts only", () => {
    expect(ssoUrlIssue("http://127.0.0.1:9000/sso")).toBeUndefined();
    expect(ssoUrlIssue("http://localhost/sso")).toBeUndefined();
    expect(ssoUrlIssue("http://[::1]/sso")).toBeUndefined();
    expect(ssoUrlIssue("http://10.0.0.1/sso")).toBeDefined();
    expect(ssoUrlIssue("ftp://127.0.0.1/sso")).toBeDefined();
  });
});

describe("the role mapping (shared with SCIM's groups)", () => {
  const mapping = { "kiln admins": "admin", engineers: "member" } as const;
  it("gives the highest mapped role, case-insensitively, else the fallback", () => {
    expect(highestMappedRole(["Engineers", " KILN ADMINS "], mapping, "member")).toBe("admin");
    expect(highestMappedRole(["engineers"], mapping, "admin")).toBe("member");
    expect(highestMappedRole(["sales"], mapping, "admin")).toBe("admin");
    expect(highestMappedRole(["constructor", "__proto__"], mapping, "member")).toBe("member");
  });
});

describe("settings in their organization", () => {
  it("owners and admins save, read and delete them; members and outsiders cannot", async () => {
    const { ownerId, organizationId } = await organization();
    const other = await organization();
    const saved = await identity.putSamlSettings(ownerId, organizationId, settings());
    expect(saved.organizationId).toBe(organizationId);
    expect((await identity.getSamlSettings(ownerId, organizationId)).idpEntityId).toBe(settings().idpEntityId);
    await expectKind(identity.getSamlSettings(other.ownerId, organizationId), "not_found");
    await expectKind(identity.putSamlSettings(other.ownerId, organizationId, settings()), "not_found");
    const member = await identity.signUp({ email: "m@example.com", password: "correct-horse-battery", fullName: "" });
    await identity.addMember(ownerId, { organizationId, email: "m@example.com", role: "member" });
    await expectKind(identity.putSamlSettings(member.user._id, organizationId, settings()), "permission_denied");
    await identity.deleteSamlSettings(ownerId, organizationId);
    await expectKind(identity.getSamlSettings(ownerId, organizationId), "not_found");
    await expectKind(identity.samlProvider(organizationId), "not_found");
  });

  it("bad settings change nothing", async () => {
    const { ownerId, organizationId } = await organization();
    await identity.putSamlSettings(ownerId, organizationId, settings());
    await expectKind(
      identity.putSamlSettings(ownerId, organizationId, settings({ idpSsoUrl: "x" })),
      "invalid_argument",
    );
    expect((await identity.getSamlSettings(ownerId, organizationId)).idpSsoUrl).toBe(settings().idpSsoUrl);
  });

  it("disabled settings sign nobody in", async () => {
    const { ownerId, organizationId } = await organization();
    await identity.putSamlSettings(ownerId, organizationId, settings({ enabled: false }));
    await expectKind(identity.samlProvider(organizationId), "not_found");
    await expectKind(signIn(organizationId, "ada@acme.example"), "not_found");
  });
});

describe("signing in", () => {
  it("makes the user just in time with the mapped role, and finds them again", async () => {
    const { ownerId, organizationId } = await organization();
    await identity.putSamlSettings(ownerId, organizationId, settings());
    const first = await signIn(organizationId, "Ada@Acme.example", ["Kiln Admins"]);
    expect(first.created).toBe(true);
    expect(first.role).toBe("admin");
    expect(first.user.email).toBe("ada@acme.example");
    expect(first.accessToken).toBeTruthy();
    const again = await signIn(organizationId, "ada@acme.example", ["engineers"]);
    expect(again.user._id).toBe(first.user._id);
    expect(again.created).toBe(false);
    expect(again.role).toBe("member");
    expect((await c.memberships.findOne({ _id: `${organizationId}:${first.user._id}` }))?.role).toBe("member");
  });

  it("gives the default role without a mapped value, and keeps roles when no attribute is configured", async () => {
    const { ownerId, organizationId } = await organization();
    await identity.putSamlSettings(ownerId, organizationId, settings({ defaultRole: "admin" }));
    expect((await signIn(organizationId, "bo@acme.example", ["sales"])).role).toBe("admin");
    await identity.putSamlSettings(ownerId, organizationId, settings({ roleAttribute: "", roleMapping: {} }));
    const r = await signIn(organizationId, "cy@acme.example");
    expect(r.role).toBe("member");
    await identity.changeMemberRole(ownerId, { organizationId, userId: r.user._id, role: "admin" });
    expect((await signIn(organizationId, "cy@acme.example")).role).toBe("admin");
  });

  it("never takes the owner role away", async () => {
    const { ownerId, organizationId } = await organization();
    await identity.putSamlSettings(ownerId, organizationId, settings());
    const r = await signIn(organizationId, "ow@acme.example", ["engineers"]);
    await identity.changeMemberRole(ownerId, { organizationId, userId: r.user._id, role: "owner" });
    expect((await signIn(organizationId, "ow@acme.example", ["engineers"])).role).toBe("owner");
  });

  it("refuses a replayed assertion and changes nothing", async () => {
    const { ownerId, organizationId } = await organization();
    await identity.putSamlSettings(ownerId, organizationId, settings());
    await signIn(organizationId, "ada@acme.example", [], "_assertion1");
    const users = await c.users.countDocuments({});
    await expectKind(signIn(organizationId, "eve@acme.example", ["Kiln Admins"], "_assertion1"), "unauthenticated");
    expect(await c.users.countDocuments({})).toBe(users);
    expect(await c.users.findOne({ email: "eve@acme.example" })).toBeNull();
  });

  it("does not take over an account that signs in with a password", async () => {
    const { ownerId, organizationId, email } = await organization();
    await identity.putSamlSettings(ownerId, organizationId, settings());
    const r = await signIn(organizationId, email);
    expect(r.user._id).not.toBe(ownerId);
    expect(r.created).toBe(true);
    expect(r.role).toBe("member");
  });

  it("signs in the user this organization's SCIM made, once nobody else signs in as them", async () => {
    const { ownerId, organizationId } = await organization();
    await identity.putSamlSettings(ownerId, organizationId, settings());
    const { token } = await identity.createScimToken(ownerId, { organizationId, name: "Okta" });
    const scimOrg = await identity.scimOrganizationOf(token);
    const provisioned = await identity.createScimUser(scimOrg, {
      externalId: "",
      userName: "pat@acme.example",
      active: true,
      displayName: "",
      givenName: "",
      familyName: "",
      emails: [],
    });
    const r = await signIn(organizationId, "pat@acme.example");
    expect(r.user._id).toBe(provisioned.userId);
    expect(r.created).toBe(false);
  });

  it("an IdP speaks for its own organization only", async () => {
    const a = await organization();
    const b = await organization();
    await identity.putSamlSettings(a.ownerId, a.organizationId, settings());
    await identity.putSamlSettings(b.ownerId, b.organizationId, settings());
    const inA = await signIn(a.organizationId, "ada@acme.example");
    const inB = await signIn(b.organizationId, "ada@acme.example");
    expect(inB.user._id).not.toBe(inA.user._id);
    expect(await c.memberships.findOne({ _id: `${b.organizationId}:${inA.user._id}` })).toBeNull();
  });

  it("refuses a NameID that is not an e-mail address", async () => {
    const { ownerId, organizationId } = await organization();
    await identity.putSamlSettings(ownerId, organizationId, settings());
    await expectKind(signIn(organizationId, "not-an-address"), "unauthenticated");
  });
});

describe("the SP-initiated state", () => {
  it("is taken once, in its organization only, and not after it expired", async () => {
    const a = await organization();
    const b = await organization();
    await identity.putSamlSettings(a.ownerId, a.organizationId, settings());
    const state = await identity.saveSamlRequest({
      organizationId: a.organizationId,
      requestId: "_r1",
      returnTo: "/x",
    });
    expect(state).toMatch(/^sst_[0-9A-Za-z]{43}$/);
    await expectKind(identity.takeSamlRequest({ organizationId: b.organizationId, state }), "not_found");
    expect((await identity.takeSamlRequest({ organizationId: a.organizationId, state })).requestId).toBe("_r1");
    await expectKind(identity.takeSamlRequest({ organizationId: a.organizationId, state }), "not_found");
    const late = await identity.saveSamlRequest({ organizationId: a.organizationId, requestId: "_r2", returnTo: "/" });
    clock = new Date(clock.getTime() + 11 * 60_000);
    await expectKind(identity.takeSamlRequest({ organizationId: a.organizationId, state: late }), "not_found");
  });

  it("is swept with the assertion ids once they expired", async () => {
    const { ownerId, organizationId } = await organization();
    await identity.putSamlSettings(ownerId, organizationId, settings());
    await identity.saveSamlRequest({ organizationId, requestId: "_r1", returnTo: "/" });
    await identity.completeSamlSignIn({
      organizationId,
      assertionId: "_a1",
      assertionExpiresAt: new Date(clock.getTime() + 60_000),
      email: "ada@acme.example",
      fullName: "",
      roleValues: [],
    });
    expect(await identity.sweepSaml()).toBe(0);
    clock = new Date(clock.getTime() + 11 * 60_000);
    expect(await identity.sweepSaml()).toBe(2);
  });
});
