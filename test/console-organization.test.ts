/**
 * The console's organization pages and navigation (issue #35 "Organization", "Finish") in Debian's
 * chromium: every nav group walked at 390 px through the menu with axe, the current page marked;
 * adding a member with a role; protecting a label; the trace retention; an API key with scopes chosen from the list,
 * copied with its button, then revoked. Screens are checked with axe at 1366 px and 390 px and
 * photographed into test-artifacts/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";

const GROUPS = {
  Build: ["Prompts", "Tools", "Skills", "Agents"],
  Run: ["Playground", "Runs", "Models"],
  Organization: ["Members", "API keys", "Settings", "Export and import"],
};
/** The heading each page opens with. */
const HEADING: Record<string, string> = { "Export and import": "Export and import" };

let c: ConsoleBrowser;

beforeAll(async () => {
  c = await openConsole();
  await signUp(c.page, c.base, "Analytical Engines");
}, 60_000);

afterAll(async () => {
  await c?.close();
});

/** Serious or critical axe violations of the page as it is now. */
async function axeViolations(): Promise<string[]> {
  const result = (await c.page.evaluate("axe.run(document)")) as {
    violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

describe("the console's navigation", () => {
  it("walks every group at 390 px through the menu, the current page marked, axe-clean", async () => {
    const { page } = c;
    await page.setViewportSize({ width: 390, height: 900 });
    const menu = page.getByRole("button", { name: "Menu" });
    const nav = page.getByRole("navigation", { name: "Main" });
    for (const [group, pages] of Object.entries(GROUPS)) {
      for (const name of pages) {
        expect(await menu.getAttribute("aria-expanded")).toBe("false");
        await menu.click();
        expect(await menu.getAttribute("aria-expanded")).toBe("true");
        await nav.getByRole("heading", { name: group }).waitFor();
        if (name === "Prompts") {
          // The open menu, photographed (screen() ends at 1366 px: back to the phone).
          await c.screen("nav-menu");
          await page.setViewportSize({ width: 390, height: 900 });
        }
        await nav.getByRole("link", { name, exact: true }).click();
        await page.getByRole("heading", { level: 1, name: HEADING[name] ?? name, exact: true }).waitFor();
        // The menu closes on the way; the link of the page is marked current, and only it.
        expect(await nav.isVisible()).toBe(false);
        const current = page.locator('#main-nav a[aria-current="page"]');
        expect(await current.count()).toBe(1);
        expect(await current.textContent()).toBe(name);
        expect(await axeViolations(), `${name} at 390px`).toEqual([]);
        const overflow = (await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")) as number;
        expect(overflow, `${name} overflows at 390px`).toBeLessThanOrEqual(0);
      }
    }
    await page.setViewportSize({ width: 1366, height: 900 });
  }, 120_000);
});

describe("the console's organization pages", () => {
  it("adds a member with a role, in words when it fails", async () => {
    const { page, base } = c;
    const colleague = `colleague-${Date.now()}@example.test`;
    const signedUp = await fetch(`${base}/api/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: colleague, password: "correct-horse-battery", fullName: "Charles Babbage" }),
    });
    expect(signedUp.status).toBe(201);
    await page.getByRole("link", { name: "Members" }).click();
    await page.getByRole("heading", { name: "Members", level: 1 }).waitFor();
    const table = page.getByRole("region", { name: "Members" });
    await table.getByRole("row").nth(1).waitFor();
    expect(await table.getByRole("row").count()).toBe(2);

    // Nothing typed: the field says so, once, in words.
    await page.getByRole("button", { name: "Add member" }).click();
    const issue = page.locator(".field .issue");
    await issue.waitFor();
    expect(await issue.textContent()).toBe("is required");
    expect(await page.getByText("is required").count()).toBe(1);
    expect(await page.locator("main").textContent()).not.toContain("must NOT");

    // Someone without an account: the API's reason, once.
    await page.getByLabel("Email").fill("nobody-here@example.test");
    await page.getByRole("button", { name: "Add member" }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").count()).toBe(1);

    await page.getByLabel("Email").fill(colleague);
    await page.getByLabel("Role").selectOption("admin");
    await page.getByRole("button", { name: "Add member" }).click();
    await page.getByRole("status").getByText("Charles Babbage joined as admin.").waitFor();
    await table.getByRole("row", { name: /Charles Babbage/ }).waitFor();
    expect(
      await table
        .getByRole("row", { name: /Charles Babbage/ })
        .getByText("admin")
        .count(),
    ).toBe(1);
    await c.screen("members");

    const { sdk, organizationId } = await consoleSdk(page, base);
    expect(sdk).toBeDefined();
    const members = await fetch(`${base}/api/organizations/${organizationId}/members`, {
      headers: { authorization: `Bearer ${(await page.context().cookies(`${base}/api`))[0]?.value}` },
    });
    const roles = ((await members.json()) as { data: { user: { email: string }; membership: { role: string } }[] })
      .data;
    expect(roles.find((m) => m.user.email === colleague)?.membership.role).toBe("admin");
  }, 120_000);

  it("protects a label and unprotects it", async () => {
    const { page, base } = c;
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByRole("heading", { name: "Settings", level: 1 }).waitFor();
    const { sdk, organizationId } = await consoleSdk(page, base);
    const protectedNow = async () => {
      const r = await fetch(`${base}/api/organizations/${organizationId}`, {
        headers: { authorization: `Bearer ${(await page.context().cookies(`${base}/api`))[0]?.value}` },
      });
      return ((await r.json()) as { organization: { settings: { protectedLabels: string[] } } }).organization.settings
        .protectedLabels;
    };
    expect(sdk).toBeDefined();
    const before = await protectedNow();
    await page.getByLabel("Label to protect").fill("release-candidate");
    await page.getByRole("button", { name: "Protect label" }).click();
    await page.getByRole("status").getByText('"release-candidate" is protected.').waitFor();
    expect(await protectedNow()).toEqual([...before, "release-candidate"]);
    await c.screen("settings");
    await page.getByRole("button", { name: "Unprotect release-candidate" }).click();
    await page.getByRole("status").getByText('"release-candidate" is no longer protected.').waitFor();
    expect(await protectedNow()).toEqual(before);
  }, 60_000);

  it("keeps traces fewer days, refusing a value out of bounds on the field", async () => {
    const { page, base } = c;
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByRole("heading", { name: "Trace retention" }).waitFor();
    const { organizationId } = await consoleSdk(page, base);
    const retention = async () => {
      const r = await fetch(`${base}/api/traces/settings?organizationId=${organizationId}`, {
        headers: { authorization: `Bearer ${(await page.context().cookies(`${base}/api`))[0]?.value}` },
      });
      return ((await r.json()) as { retentionDays: number }).retentionDays;
    };
    await page.getByText("Traces are kept 30 days (1 to 400).").waitFor();
    const days = page.getByLabel("Keep traces (days)");
    await days.fill("500");
    await page.getByRole("button", { name: "Save retention" }).click();
    await page.locator('input[aria-invalid="true"]').waitFor();
    expect(await retention()).toBe(30);
    await days.fill("14");
    await page.getByRole("button", { name: "Save retention" }).click();
    await page.getByRole("status").getByText("Traces stored from now on are kept 14 days.").waitFor();
    await page.getByText("Traces are kept 14 days (1 to 400).").waitFor();
    expect(await retention()).toBe(14);
    expect(await axeViolations()).toEqual([]);
  }, 60_000);

  it("creates an API key with scopes from the list, copies it, and revokes it", async () => {
    const { page, base } = c;
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    await page.getByText("No key yet.").waitFor();
    await page.getByLabel("Key name").fill("CI");
    await page.getByRole("checkbox", { name: "prompts:read" }).uncheck();
    await page.getByRole("checkbox", { name: "runs:read" }).check();
    await page.getByRole("button", { name: "Create key" }).click();
    const secret = page.locator("code.secret");
    await secret.waitFor();
    const key = (await secret.textContent()) ?? "";
    expect(key).toMatch(/^sk_/);
    await page.getByRole("button", { name: "Copy key" }).click();
    await page.getByText("Copied to the clipboard.").waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(key);
    const row = page.getByRole("region", { name: "API keys" }).getByRole("row", { name: /CI/ });
    await row.waitFor();
    expect(await row.locator(".chip").allTextContents()).toEqual(["runs:write", "runs:read"]);
    await c.screen("api-keys");
    // The key works with the scopes chosen, until it is revoked.
    const asKey = () => fetch(`${base}/api/models`, { headers: { authorization: `Bearer ${key}` } });
    expect((await asKey()).status).toBe(200);
    await row.getByRole("button", { name: "Revoke CI" }).click();
    await row.getByText("revoked").waitFor();
    expect((await asKey()).status).toBe(401);
  }, 60_000);
});
