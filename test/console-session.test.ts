/**
 * The console's session (issue #35 "Finish"; docs/security.md "Console session") in Debian's
 * chromium: the sign-in page for returning users, a session that survives a new tab without a
 * script ever seeing the token (an httpOnly, SameSite=Strict cookie), writes refused without the
 * CSRF header and from another site, sign-out, and the not-found page. Each screen is checked with
 * axe at 1366 px and 390 px and photographed into test-artifacts/console/.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";

let c: ConsoleBrowser;
let credentials: { email: string; password: string };
/** Another site: serves a page that posts a form to the gateway (a CSRF attempt). */
let evil: Server;
let evilBase: string;

beforeAll(async () => {
  c = await openConsole();
  evil = createServer((req, res) => {
    const target = new URL(req.url ?? "/", "http://x").searchParams.get("target") ?? "";
    res
      .writeHead(200, { "content-type": "text/html" })
      .end(
        `<!doctype html><title>Win a prize</title><form method="post" enctype="text/plain" action="${target}">` +
          `<input name='{"organizationId":"x","name":"stolen","scopes":["prompts:read"],"pad":"' value='"}'>` +
          `<button>Claim</button></form>`,
      );
  });
  evil.listen(0, "127.0.0.1");
  await once(evil, "listening");
  // "localhost" is another site than the gateway's "127.0.0.1": SameSite=Strict applies.
  evilBase = `http://localhost:${(evil.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  evil?.close();
  await c?.close();
});

describe("the console's session", () => {
  it("keeps the token out of scripts, survives a new tab, and refuses cross-site writes", async () => {
    const { page, base } = c;
    credentials = await signUp(page, base, "Session Works");

    const cookie = (await page.context().cookies(`${base}/api`)).find((k) => k.name === "kiln_session");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/api", secure: false });
    const token = cookie?.value ?? "";
    expect(token.length).toBeGreaterThan(20);
    // No script sees it: not in document.cookie, not in either storage.
    const visible = (await page.evaluate(
      "document.cookie + JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage })",
    )) as string;
    expect(visible).not.toContain(token);
    expect(visible).not.toContain("kiln_session");

    // A new tab of the same browser opens signed in.
    const tab = await page.context().newPage();
    await tab.goto(`${base}/runs`);
    await tab.getByRole("heading", { name: "Runs", exact: true }).waitFor();
    await tab.getByRole("note", { name: "Organization" }).getByText("Session Works").waitFor();

    // A write from the console's own origin without the CSRF header: refused, nothing created.
    const { sdk, organizationId } = await consoleSdk(page, base);
    const refused = (await tab.evaluate(
      `fetch("/api/api-keys", { method: "POST", headers: { "content-type": "application/json" },
        body: JSON.stringify({ organizationId: "${organizationId}", name: "no-csrf", scopes: ["prompts:read"] }) })
        .then(async (r) => ({ status: r.status, body: await r.json() }))`,
    )) as { status: number; body: { error: { code: string } } };
    expect(refused).toMatchObject({ status: 403, body: { error: { code: "permission_denied" } } });

    // Another site's form posting to the gateway: the browser does not send the cookie.
    await tab.goto(`${evilBase}/?target=${encodeURIComponent(`${base}/api/api-keys`)}`);
    const [answer] = await Promise.all([
      tab.waitForResponse((r) => r.url() === `${base}/api/api-keys`),
      tab.getByRole("button", { name: "Claim" }).click(),
    ]);
    expect(answer.status()).toBe(401);
    expect((await sdk.setup.verify({})).ok).toBe(true);
    const keys = await fetch(`${base}/api/api-keys?organizationId=${organizationId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await keys.json()) as { data: unknown[] }).data).toEqual([]);
    await tab.close();
  }, 120_000);

  it("signs out everywhere, and a returning user signs in to the page they opened", async () => {
    const { page, base } = c;
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to Kiln" }).waitFor();
    expect(await page.context().cookies(`${base}/api`)).toEqual([]);
    const tab = await page.context().newPage();
    await tab.goto(`${base}/prompts`);
    await tab.getByRole("heading", { name: "Sign in to Kiln" }).waitFor();
    await tab.close();

    // The first screen of a signed-out browser is the sign-in page, with the way to sign up.
    await page.goto(`${base}/runs`);
    await page.getByRole("heading", { name: "Sign in to Kiln" }).waitFor();
    await page.getByLabel("Email").fill(credentials.email);
    await page.getByLabel("Password").fill("not-the-password");
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/^[A-Z]/);
    expect(await page.getByRole("alert").count()).toBe(1);
    await c.screen("signin");

    // Empty fields: one message per field, in words, not a schema's.
    await page.getByLabel("Password").fill("");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").getByText("is required").first().waitFor();
    expect(await page.locator("body").textContent()).not.toContain("must NOT have");

    await page.getByLabel("Password").fill(credentials.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Runs", exact: true }).waitFor();
    expect(page.url()).toBe(`${base}/runs`);
    expect(await page.locator('#main-nav a[aria-current="page"]').textContent()).toBe("Runs");
  }, 120_000);

  it("shows a not-found page for an unknown address", async () => {
    const { page, base } = c;
    await page.goto(`${base}/nowhere/at-all`);
    await page.getByRole("heading", { name: "Page not found" }).waitFor();
    expect(await page.locator("main code").textContent()).toBe("/nowhere/at-all");
    await c.screen("not-found");
    await page.getByRole("link", { name: "Go to your prompts" }).click();
    await page.getByRole("heading", { name: "Prompts", exact: true }).waitFor();
    // The favicon: a hashed asset the gateway serves (the Content-Security-Policy allows 'self' only).
    const icon = (await page.locator('link[rel="icon"]').getAttribute("href")) ?? "";
    expect(icon).toMatch(/^\/assets\/favicon-[\w-]+\.svg$/);
    const served = await fetch(`${base}${icon}`);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toContain("image/svg+xml");
  }, 60_000);
});
