/**
 * The console's organization pages and navigation (issue #35 "Organization", "Finish") in Debian's
 * chromium: every nav group walked at 390 px through the menu with axe, the current page marked;
 * adding a member with a role; inviting by a copied link that another browser opens to sign up
 * and land in the organization; changing a role (asked before lowering it), the last owner kept,
 * removing a member; protecting a label; the trace retention; an API key with scopes chosen from the list,
 * copied with its button, then revoked. Screens are checked with axe at 1366 px and 390 px and
 * photographed into test-artifacts/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";

const GROUPS = {
  Build: ["Prompts", "Tools", "Skills", "Agents"],
  Run: ["Playground", "Models"],
  Observe: ["Runs", "Traces", "Sessions", "Online evaluation", "Review", "Datasets"],
  Organization: ["Members", "Usage", "API keys", "Settings", "Audit log", "Export and import"],
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
    await page.getByLabel("Role", { exact: true }).selectOption("admin");
    await page.getByRole("button", { name: "Add member" }).click();
    await page.getByRole("status").getByText("Charles Babbage joined as admin.").waitFor();
    await table.getByRole("row", { name: /Charles Babbage/ }).waitFor();
    expect(await table.getByLabel("Role of Charles Babbage").inputValue()).toBe("admin");
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

  it("invites by a link copied once; the invitee opens it in another browser, signs up and lands in the organization", async () => {
    const { page, base } = c;
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    const invitee = `grace-${Date.now()}@example.test`;
    await page.getByLabel("Email", { exact: true }).fill(invitee);
    await page.getByLabel("Role", { exact: true }).selectOption("member");
    await page.getByRole("button", { name: "Invite by link" }).click();
    const shown = page.getByRole("region", { name: "Invitation link" });
    await shown.waitFor();
    const link = (await shown.locator("code.secret").textContent()) ?? "";
    expect(link).toMatch(new RegExp(`^${base}/invite#inv_[0-9a-f]{32}_[0-9A-Za-z]{43}$`));
    await shown.getByRole("button", { name: "Copy link" }).click();
    await shown.getByText("Copied the link.").waitFor();
    const copied = (await page.evaluate("navigator.clipboard.readText()")) as string;
    expect(copied).toBe(link);
    const pending = page.getByRole("region", { name: "Invitations", exact: true });
    await pending.getByRole("row", { name: new RegExp(invitee) }).waitFor();
    // The list never holds the link: only the moment of creation shows it.
    expect(await pending.textContent()).not.toContain(link.split("#")[1]);
    await c.screen("members-invite");

    // The invitee, in their own browser: sign up from the link, straight into the organization.
    const other = await c.newPage();
    await other.goto(copied);
    await other.getByRole("heading", { name: "Create your account to join" }).waitFor();
    await c.screen("invite-signup", other);
    await other.getByLabel("Full name").fill("Grace Hopper");
    await other.getByLabel("Email").fill(invitee);
    await other.getByLabel("Password").fill("correct-horse-battery");
    await other.getByRole("button", { name: "Sign up" }).click();
    await other.getByRole("heading", { name: "Prompts", exact: true }).waitFor();
    expect(await other.getByRole("note", { name: "Organization" }).textContent()).toBe("Analytical Engines");
    // Used: the same link refuses, in words.
    await other.goto(copied);
    await other.getByRole("button", { name: "Join the organization" }).click();
    await other.getByRole("alert").getByText("This invitation has already been used").waitFor();
    await other.context().close();

    await page.reload();
    const table = page.getByRole("region", { name: "Members" });
    expect(await table.getByLabel("Role of Grace Hopper").inputValue()).toBe("member");
    await page.getByText("No pending invitation.").waitFor();

    // Another invitation, revoked: gone from the list.
    await page.getByLabel("Email", { exact: true }).fill(`revoked-${invitee}`);
    await page.getByRole("button", { name: "Invite by link" }).click();
    await pending.getByRole("button", { name: `Revoke the invitation for revoked-${invitee}` }).click();
    await page.getByRole("status").getByText(`The invitation for revoked-${invitee} is revoked`).waitFor();
    await page.getByText("No pending invitation.").waitFor();
  }, 120_000);

  it("changes a role (asking before lowering it), keeps the last owner, and removes a member", async () => {
    const { page, base } = c;
    const table = page.getByRole("region", { name: "Members" });
    await table.getByLabel("Role of Grace Hopper").selectOption("admin");
    await page.getByRole("status").getByText("Grace Hopper is now admin.").waitFor();
    await table.getByLabel("Role of Grace Hopper").selectOption("member");
    const dialog = page.getByRole("alertdialog");
    await dialog.getByText("Make Grace Hopper a member?").waitFor();
    expect(
      await dialog.getByRole("button", { name: "Cancel" }).evaluate((b) => b === b.ownerDocument.activeElement),
    ).toBe(true);
    expect(await table.getByLabel("Role of Grace Hopper").inputValue()).toBe("admin");
    await c.screen("members-confirm");
    await dialog.getByRole("button", { name: "Yes, change the role" }).click();
    await page.getByRole("status").getByText("Grace Hopper is now member.").waitFor();

    // The only owner cannot step down: the reason, in words.
    await table.getByLabel("Role of Ada Lovelace").selectOption("admin");
    await dialog.getByRole("button", { name: "Yes, change the role" }).click();
    await table
      .getByRole("alert")
      .getByText(/keeps at least one owner/)
      .waitFor();
    expect(await table.getByLabel("Role of Ada Lovelace").inputValue()).toBe("owner");

    await table.getByRole("button", { name: "Remove Grace Hopper" }).click();
    await dialog.getByRole("button", { name: "Yes, remove Grace Hopper" }).click();
    await page.getByRole("status").getByText("Grace Hopper was removed.").waitFor();
    expect(await table.getByRole("row", { name: /Grace Hopper/ }).count()).toBe(0);
    const { organizationId } = await consoleSdk(page, base);
    const members = await fetch(`${base}/api/organizations/${organizationId}/members`, {
      headers: { authorization: `Bearer ${(await page.context().cookies(`${base}/api`))[0]?.value}` },
    });
    const emails = ((await members.json()) as { data: { user: { fullName: string } }[] }).data.map(
      (m) => m.user.fullName,
    );
    expect(emails).not.toContain("Grace Hopper");
  }, 60_000);

  it("makes a custom role of scopes, gives it to a member from the picker, and deletes it once nobody holds it", async () => {
    const { page, base } = c;
    const roles = page.getByRole("region", { name: "Custom roles" });
    const form = page.getByRole("form", { name: "Create a custom role" });
    await form.getByLabel("Role name").fill("release-reader");
    await form.getByLabel("Description (optional)").fill("Reads prompts and runs for release notes");
    await form.getByLabel("runs:read").check();
    await form.getByLabel("evaluations:read").check();
    await form.getByRole("button", { name: "Create role" }).click();
    const row = roles.getByRole("row").filter({ hasText: "release-reader" });
    await row.waitFor();
    expect(await row.textContent()).toContain("evaluations:read");
    await c.screen("members-custom-role");

    // Offered by the role pickers, with what it grants: given to Charles (lowering an admin asks first).
    const table = page.getByRole("region", { name: "Members" });
    await table.getByLabel("Role of Charles Babbage").selectOption("release-reader");
    const dialog = page.getByRole("alertdialog");
    await dialog.getByRole("button", { name: "Yes, change the role" }).click();
    await page.getByRole("status").getByText("Charles Babbage is now release-reader.").waitFor();
    await page.getByLabel("Role", { exact: true }).selectOption("release-reader");
    await page.getByText(/Custom: prompts:read, runs:read, evaluations:read\./).waitFor();

    // Held, it cannot be deleted: the reason, in words; once nobody holds it, it goes.
    await row.getByRole("button", { name: "Delete release-reader", exact: true }).click();
    await dialog.getByRole("button", { name: "Yes, delete release-reader" }).click();
    await roles.getByRole("alert").waitFor();
    await table.getByLabel("Role of Charles Babbage").selectOption("member");
    await page.getByRole("status").getByText("Charles Babbage is now member.").waitFor();
    await row.getByRole("button", { name: "Delete release-reader", exact: true }).click();
    await dialog.getByRole("button", { name: "Yes, delete release-reader" }).click();
    await row.waitFor({ state: "detached" });
    const { organizationId } = await consoleSdk(page, base);
    const left = await fetch(`${base}/api/organizations/${organizationId}/roles`, {
      headers: { authorization: `Bearer ${(await page.context().cookies(`${base}/api`))[0]?.value}` },
    });
    const names = ((await left.json()) as { data: { name: string; builtIn: boolean }[] }).data.filter(
      (r) => !r.builtIn,
    );
    expect(names).toEqual([]);
  }, 60_000);

  it("an existing user with their own organization signs in from the link, joins, and the console opens it", async () => {
    const { page, base } = c;
    const email = `lovelace-${Date.now()}@example.test`;
    const password = "correct-horse-battery";
    const post = (path: string, body: unknown, token?: string) =>
      fetch(`${base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
    const { accessToken } = (await (await post("/api/auth/signup", { email, password })).json()) as {
      accessToken: string;
    };
    expect(
      (await post("/api/onboarding/complete", { fullName: "Augusta", organizationName: "Her own" }, accessToken))
        .status,
    ).toBe(201);
    await page.getByLabel("Email", { exact: true }).fill(email);
    await page.getByLabel("Role", { exact: true }).selectOption("admin");
    await page.getByRole("button", { name: "Invite by link" }).click();
    const link =
      (await page.getByRole("region", { name: "Invitation link" }).locator("code.secret").textContent()) ?? "";

    const other = await c.newPage();
    await other.goto(link);
    await other.getByRole("button", { name: "Sign in" }).click();
    await other.getByLabel("Email").fill(email);
    await other.getByLabel("Password").fill(password);
    await other.getByRole("button", { name: "Sign in" }).click();
    await other.getByRole("button", { name: "Join the organization" }).click();
    await other.getByRole("heading", { name: "Prompts", exact: true }).waitFor();
    const organization = other.getByRole("note", { name: "Organization" });
    expect(await organization.textContent()).toBe("Analytical Engines");
    // Still there after a reload: the organization joined is the one the console opens.
    await other.reload();
    await other.getByRole("heading", { name: "Prompts", exact: true }).waitFor();
    expect(await organization.textContent()).toBe("Analytical Engines");
    await other.context().close();
    await page.reload();
    expect(await page.getByRole("region", { name: "Members" }).getByLabel("Role of Augusta").inputValue()).toBe(
      "admin",
    );
  }, 60_000);

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
    // Revoking is asked for first: a cancelled revocation changes nothing.
    await row.getByRole("button", { name: "Revoke CI" }).click();
    const revoking = page.getByRole("alertdialog", { name: /Revoke CI\? Every call made with it is refused/ });
    await revoking.getByRole("button", { name: "Cancel" }).click();
    await revoking.waitFor({ state: "detached" });
    expect(
      await row.getByRole("button", { name: "Revoke CI" }).evaluate((b) => b === b.ownerDocument.activeElement),
    ).toBe(true);
    expect((await asKey()).status).toBe(200);
    await row.getByRole("button", { name: "Revoke CI" }).click();
    await revoking.getByRole("button", { name: "Yes, revoke CI" }).click();
    await row.getByText("revoked").waitFor();
    expect((await asKey()).status).toBe(401);
  }, 60_000);

  it("creates an API key with a token-per-minute limit, and marks a bad limit on its field", async () => {
    const { page } = c;
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    await page.getByLabel("Key name").fill("Batch");
    const limit = page.getByLabel("Tokens per minute (empty: no limit)");
    await limit.fill("0");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.locator('input[aria-invalid="true"]').waitFor();
    const table = page.getByRole("region", { name: "API keys" });
    expect(await table.getByRole("row", { name: /Batch/ }).count()).toBe(0);
    await limit.fill("40000");
    await page.getByRole("button", { name: "Create key" }).click();
    const row = table.getByRole("row", { name: /Batch/ });
    await row.waitFor();
    expect(await row.getByRole("cell").nth(2).textContent()).toBe("40,000");
    // The key made earlier has none.
    expect(await table.getByRole("row", { name: /CI/ }).getByRole("cell").nth(2).textContent()).toBe("no limit");
    expect(await axeViolations()).toEqual([]);
  }, 60_000);
});
