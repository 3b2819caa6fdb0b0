/**
 * SAML 2.0 sign-in per organization end to end (issue #51, docs/security.md "SAML sign-in"), in
 * both run modes over real HTTP, against a real local IdP (samlify, @kiln/testing/saml-idp) that
 * signs its responses with a throwaway key: the settings (owners and admins, 400s naming fields,
 * audited), the SP metadata, an SP-initiated round trip to the console's session cookie with the
 * role mapped from an attribute, IdP-initiated sign-in refused then allowed, and a forged, a
 * misaddressed, an expired and a replayed response each refused with nothing changed, each sign-in
 * recorded in the organization's audit log, success and failure.
 */
import { type SamlTestIdp, selfSignedKeyPair, startSamlTestIdp } from "@kiln/testing/saml-idp";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROVIDER_MODES, type RunningKiln } from "./support/provider-modes.js";

interface Entry {
  action: string;
  actor: { type: string; id: string };
  target: { type: string; id: string };
  outcome: string;
  changedFields: string[];
}

describe.each(PROVIDER_MODES)("SAML sign-in in $name", (mode) => {
  let running: RunningKiln;
  let api: TestClient;
  let idp: SamlTestIdp;
  let owner: { token: string; id: string };
  let organizationId: string;
  let sp: { entityId: string; acsUrl: string };

  const settings = (over: Record<string, unknown> = {}) => ({
    enabled: true,
    idpEntityId: idp.entityId,
    idpSsoUrl: idp.ssoUrl,
    idpCertificate: idp.keys.certificate,
    roleAttribute: "groups",
    roleMapping: { "Kiln Admins": "admin" },
    defaultRole: "member",
    allowIdpInitiated: false,
    ...over,
  });
  const put = (body: unknown, token = owner.token) =>
    api.put<Record<string, unknown>>(`/api/organizations/${organizationId}/saml`, body, { token });

  const post = (fields: Record<string, string>, accept = "application/json") =>
    fetch(sp.acsUrl, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", accept },
      body: new URLSearchParams(fields),
    });

  const members = async () =>
    (
      await api.get<{ data: { user: { id: string; email: string }; membership: { role: string } }[] }>(
        `/api/organizations/${organizationId}/members`,
        { token: owner.token, query: { limit: 200 } },
      )
    ).body.data;
  const entries = async (action: string) =>
    (
      await api.get<{ data: Entry[] }>("/api/audit-log", {
        token: owner.token,
        query: { organizationId, action, limit: 200 },
      })
    ).body.data;

  /** An SP-initiated sign-in up to the IdP: its AuthnRequest's id and the RelayState. */
  async function startSignIn(returnTo = "/prompts") {
    const res = await fetch(`${running.base}/saml/${organizationId}/login?returnTo=${encodeURIComponent(returnTo)}`, {
      redirect: "manual",
    });
    expect(res.status).toBe(302);
    const location = res.headers.get("location") ?? "";
    expect(location.startsWith(`${idp.ssoUrl}?`)).toBe(true);
    return {
      requestId: await idp.requestIdOf(location, sp),
      relayState: new URL(location).searchParams.get("RelayState") ?? "",
    };
  }

  /** A refused post: 401 with the reason, and the address never made a member. */
  async function expectRefused(fields: Record<string, string>, email: string, reason: RegExp) {
    const before = await members();
    const failures = (await entries("user.sign_in_failed")).length;
    const res = await post(fields);
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("unauthenticated");
    expect(body.error.message).toMatch(reason);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(await members()).toEqual(before);
    expect((await members()).some((m) => m.user.email === email)).toBe(false);
    const failed = await entries("user.sign_in_failed");
    expect(failed.length).toBe(failures + 1);
    expect(failed[0]?.outcome).toBe("failure");
    expect(failed[0]?.actor.type).toBe("anonymous");
  }

  beforeAll(async () => {
    idp = await startSamlTestIdp();
    running = await mode.start();
    api = createTestClient(running.base);
    const signedUp = await api.signUp();
    owner = { token: signedUp.accessToken, id: signedUp.user.id };
    organizationId = (await api.onboard(signedUp.accessToken)).organization.id;
    const base = `${running.base}/saml/${organizationId}`;
    sp = { entityId: `${base}/metadata`, acsUrl: `${base}/acs` };
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
    await idp?.close();
  });

  it("refuses bad settings naming the fields, and changes nothing", async () => {
    const bad = await put(
      settings({
        idpCertificate: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        idpSsoUrl: "http://idp.example/sso",
        roleMapping: { Owners: "owner" },
      }),
    );
    expect(bad.status).toBe(400);
    const fields = (bad.body as unknown as { error: { details: { field: string }[] } }).error.details.map(
      (d) => d.field,
    );
    expect(fields).toEqual(expect.arrayContaining(["idpCertificate", "idpSsoUrl", "roleMapping.Owners"]));
    expect((await api.get(`/api/organizations/${organizationId}/saml`, { token: owner.token })).status).toBe(404);
    expect((await fetch(`${running.base}/saml/${organizationId}/login`, { redirect: "manual" })).status).toBe(404);
  });

  it("saves settings for owners and admins, shows the fingerprint and what to give the IdP, and audits it", async () => {
    const saved = await put(settings());
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      organizationId,
      enabled: true,
      idpEntityId: idp.entityId,
      roleMapping: { "kiln admins": "admin" },
      serviceProvider: { entityId: sp.entityId, acsUrl: sp.acsUrl },
    });
    const cert = saved.body.certificate as { fingerprintSha256: string };
    expect(cert.fingerprintSha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(JSON.stringify(saved.body)).not.toContain("BEGIN CERTIFICATE");
    const got = await api.get(`/api/organizations/${organizationId}/saml`, { token: owner.token });
    expect(got.body).toEqual(saved.body);
    const outsider = await api.signUp();
    expect((await put(settings(), outsider.accessToken)).status).toBe(404);
    const [entry] = await entries("settings.saml.updated");
    expect(entry?.target).toEqual({ type: "organization", id: organizationId });
    expect(entry?.changedFields).toContain("idpCertificate");
    expect(JSON.stringify(entry)).not.toContain(idp.ssoUrl);
  });

  it("serves the SP metadata", async () => {
    const res = await fetch(`${running.base}/saml/${organizationId}/metadata`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/samlmetadata+xml");
    const xml = await res.text();
    expect(xml).toContain(`entityID="${sp.entityId}"`);
    expect(xml).toContain(`Location="${sp.acsUrl}"`);
    expect(xml).toContain("nameid-format:emailAddress");
  });

  it("signs in SP-initiated: the session cookie, returnTo, a member made just in time with the mapped role", async () => {
    const { requestId, relayState } = await startSignIn("/prompts?tab=1");
    expect(relayState).toMatch(/^sst_/);
    const email = `ada-${Date.now()}@acme.example`;
    const response = await idp.response({
      sp,
      email,
      inResponseTo: requestId,
      attributes: { groups: ["Kiln Admins"] },
    });
    const res = await post({ SAMLResponse: response, RelayState: relayState });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/prompts?tab=1");
    const cookie = res.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^kiln_session=[^;]+; Path=\/api; Expires=[^;]+; HttpOnly; SameSite=Strict$/);
    const session = cookie.split(";")[0] ?? "";
    const me = await fetch(`${running.base}/api/organizations/${organizationId}`, { headers: { cookie: session } });
    expect(me.status).toBe(200);
    const member = (await members()).find((m) => m.user.email === email);
    expect(member?.membership.role).toBe("admin");
    const [entry] = await entries("user.signed_in");
    expect(entry).toMatchObject({ outcome: "success", actor: { type: "user", id: member?.user.id } });
    expect(entry?.target).toEqual({ type: "user", id: email });
    // The state is taken once.
    const again = await idp.response({ sp, email, inResponseTo: requestId });
    await expectRefused({ SAMLResponse: again, RelayState: relayState }, "nobody", /RelayState/);
  });

  it("refuses IdP-initiated sign-in until it is allowed", async () => {
    const email = `idp-${Date.now()}@acme.example`;
    await expectRefused({ SAMLResponse: await idp.response({ sp, email }) }, email, /IdP-initiated/);
    expect((await put(settings({ allowIdpInitiated: true }))).status).toBe(200);
    const res = await post({ SAMLResponse: await idp.response({ sp, email }), RelayState: "/runs" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/runs");
    expect((await members()).find((m) => m.user.email === email)?.membership.role).toBe("member");
    const external = await post({ SAMLResponse: await idp.response({ sp, email }), RelayState: "//evil.example/" });
    expect(external.headers.get("location")).toBe("/");
  });

  it("refuses a forged, a misaddressed, an expired and a replayed response, with nothing changed", async () => {
    const email = (tag: string) => `${tag}-${Date.now()}@acme.example`;
    const forged = email("forged");
    const signWith = await selfSignedKeyPair();
    await expectRefused({ SAMLResponse: await idp.response({ sp, email: forged, signWith }) }, forged, /signature/i);
    const elsewhere = email("audience");
    const audience = "https://other.example/saml";
    await expectRefused(
      { SAMLResponse: await idp.response({ sp, email: elsewhere, audience }) },
      elsewhere,
      /audience/i,
    );
    const late = email("expired");
    const issuedAt = new Date(Date.now() - 30 * 60_000);
    await expectRefused({ SAMLResponse: await idp.response({ sp, email: late, issuedAt }) }, late, /expired/i);
    const { requestId, relayState } = await startSignIn();
    const once = await idp.response({ sp, email: email("once"), inResponseTo: requestId, assertionId: "_replayed1" });
    expect((await post({ SAMLResponse: once, RelayState: relayState })).status).toBe(303);
    const replayer = email("replay");
    await expectRefused(
      { SAMLResponse: await idp.response({ sp, email: replayer, assertionId: "_replayed1" }) },
      replayer,
      /replay/,
    );
  });

  it("answers a browser with a page, and refuses a returnTo on another origin", async () => {
    const res = await post({ SAMLResponse: Buffer.from("<x/>").toString("base64") }, "text/html");
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(await res.text()).toContain("SAML sign-in failed");
    const away = await fetch(`${running.base}/saml/${organizationId}/login?returnTo=https://evil.example/`, {
      redirect: "manual",
    });
    expect(away.status).toBe(400);
    const body = (await away.json()) as { error: { details: { field: string }[] } };
    expect(body.error.details[0]?.field).toBe("returnTo");
  });

  it("deletes the settings: sign-in stops", async () => {
    expect((await api.delete(`/api/organizations/${organizationId}/saml`, { token: owner.token })).status).toBe(200);
    expect((await entries("settings.saml.deleted")).length).toBe(1);
    expect((await fetch(`${running.base}/saml/${organizationId}/login`, { redirect: "manual" })).status).toBe(404);
    const res = await post({ SAMLResponse: await idp.response({ sp, email: "late@acme.example" }) });
    expect(res.status).toBe(404);
  });
});
