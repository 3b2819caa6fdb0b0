/**
 * SAML sign-in in Debian's chromium (issue #51, docs/security.md "SAML sign-in"): the console's
 * sign-in page offers "Sign in with SSO"; the organization's id sends the browser to a real local
 * IdP (samlify, on "localhost": another site than the console at 127.0.0.1), whose login page posts
 * the signed response to the ACS, and the browser lands on the console's prompts signed in (the
 * httpOnly session cookie), a member made just in time with the role its group maps to. An
 * organization without SAML sign-in gets the gateway's page saying so. Screens are checked with
 * axe and photographed into test-artifacts/console/.
 */
import { type SamlTestIdp, startSamlTestIdp } from "@kiln/testing/saml-idp";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole } from "./support/console-browser.js";

let c: ConsoleBrowser;
let idp: SamlTestIdp;
let api: TestClient;
let owner: string;
let organizationId: string;

beforeAll(async () => {
  c = await openConsole();
  idp = await startSamlTestIdp("localhost");
  api = createTestClient(c.base);
  const signedUp = await api.signUp();
  owner = signedUp.accessToken;
  organizationId = (await api.onboard(owner, "Acme SSO")).organization.id;
  const saved = await api.put(
    `/api/organizations/${organizationId}/saml`,
    {
      enabled: true,
      idpEntityId: idp.entityId,
      idpSsoUrl: idp.ssoUrl,
      idpCertificate: idp.keys.certificate,
      roleAttribute: "groups",
      roleMapping: { "Kiln Admins": "admin" },
    },
    { token: owner },
  );
  expect(saved.status).toBe(200);
}, 60_000);

afterAll(async () => {
  await c?.close();
  await idp?.close();
});

describe("SAML sign-in in the browser", () => {
  it("signs in through the IdP from the sign-in page and lands on the console", async () => {
    const { page, base } = c;
    const email = `sso-${Date.now()}@acme.example`;
    idp.setUser(email, { groups: ["Kiln Admins"] });
    await page.goto(`${base}/signin`);
    await page.getByRole("heading", { name: "Sign in with SSO" }).waitFor();
    await c.screen("signin-sso");

    await page.getByLabel("Organization id").fill("acme");
    await page.getByRole("button", { name: "Continue with SSO" }).click();
    await page.getByText("an organization id looks like org_").waitFor();

    await page.getByLabel("Organization id").fill(organizationId);
    await page.getByRole("button", { name: "Continue with SSO" }).click();
    await page.getByRole("heading", { name: "Local IdP sign-in" }).waitFor();
    expect(page.url().startsWith(`${idp.ssoUrl}?SAMLRequest=`)).toBe(true);
    await page.getByRole("button", { name: "Sign in at the IdP" }).click();
    await page.getByRole("button", { name: "Continue to Kiln" }).click();

    await page.getByRole("heading", { name: "Prompts", exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/prompts");
    await c.screen("saml-signed-in");

    const cookie = (await page.context().cookies(`${base}/api`)).find((k) => k.name === "kiln_session");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/api" });
    const { organizationId: signedInTo } = await consoleSdk(page, base);
    expect(signedInTo).toBe(organizationId);
    const members = await api.get<{ data: { user: { email: string }; membership: { role: string } }[] }>(
      `/api/organizations/${organizationId}/members`,
      { token: owner },
    );
    expect(members.body.data.find((m) => m.user.email === email)?.membership.role).toBe("admin");
  });

  it("shows the gateway's page for an organization without SAML sign-in", async () => {
    const other = await api.onboard((await api.signUp()).accessToken, "No SSO");
    const page = await c.newPage();
    await page.goto(`${c.base}/signin`);
    await page.getByLabel("Organization id").fill(other.organization.id);
    await page.getByRole("button", { name: "Continue with SSO" }).click();
    await page.getByRole("heading", { name: "SAML sign-in failed" }).waitFor();
    await page.getByText("SAML sign-in is not enabled for this organization").waitFor();
    await c.screen("saml-not-enabled", page);
    await page.getByRole("link", { name: "Back to sign-in" }).click();
    await page.getByRole("heading", { name: "Sign in to Kiln" }).waitFor();
  });
});
