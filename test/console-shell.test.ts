/**
 * The console's shell (issue #35 "Organization switcher", "Navigation") in Debian's chromium: the
 * sidebar at ≥ 1024 px with every group, the current page and the user menu; a user with one
 * organization sees its name and "Create organization" only; creating a second organization from
 * the switcher; switching between the two (the list follows, a detail page gives way to its list),
 * the choice kept by a reload and a new tab; below 1024 px the same sidebar as a drawer the
 * keyboard opens, keeps focus in and closes with Escape. Every screen is checked with axe and for
 * horizontal overflow at 1366 px and 390 px, and photographed (test-artifacts/console/).
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";

let c: ConsoleBrowser;
let email: string;

beforeAll(async () => {
  c = await openConsole();
  ({ email } = await signUp(c.page, c.base, "Analytical Engines"));
}, 60_000);

afterAll(async () => {
  await c?.close();
});

/** The API as the console's signed-in user (their session cookie as the bearer token). */
async function asUser(page: Page, path: string, body?: unknown): Promise<Response> {
  const token = (await page.context().cookies(`${c.base}/api`)).find((k) => k.name === "kiln_session")?.value;
  return fetch(`${c.base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A prompt made through the API, as the console's user, in `organizationId`. */
async function promptIn(page: Page, organizationId: string, name: string): Promise<string> {
  const r = await asUser(page, "/api/prompts", { organizationId, name });
  expect(r.status).toBe(201);
  return ((await r.json()) as { id: string }).id;
}

const organizationOf = (page: Page) => page.getByRole("note", { name: "Organization" });
const sidebarNav = (page: Page) => page.getByRole("navigation", { name: "Main" });

/** The prompt list of the organization shown, once it has loaded. */
async function promptNames(page: Page): Promise<string[]> {
  const list = page.getByRole("region", { name: "All prompts" });
  await list.getByRole("link").first().waitFor();
  return list.getByRole("link").allTextContents();
}

let first: string;

describe("the console's shell", () => {
  it("shows the sidebar at 1366 px: every group, the current page, who is signed in", async () => {
    const { page } = c;
    first = (await consoleSdk(page, c.base)).organizationId;
    await promptIn(page, first, "Engine notes");
    await page.reload();
    expect(await promptNames(page)).toEqual(["Engine notes"]);
    const nav = sidebarNav(page);
    expect(await nav.isVisible()).toBe(true);
    expect(await page.getByRole("button", { name: "Menu", exact: true }).isVisible()).toBe(false);
    expect(await nav.getByRole("heading").allTextContents()).toEqual(["Build", "Run", "Observe", "Organization"]);
    const current = nav.locator('a[aria-current="page"]');
    expect(await current.allTextContents()).toEqual(["Prompts"]);
    const user = page.locator(".user-menu");
    await user.getByText("Ada Lovelace").waitFor();
    expect(await user.getByText(email).isVisible()).toBe(true);
    expect(await page.getByRole("button", { name: "Sign out" }).isVisible()).toBe(true);
    expect(await organizationOf(page).textContent()).toBe("Analytical Engines");

    // One organization: its name, and behind the toggle only "Create organization".
    const toggle = page.getByRole("button", { name: "Organization options" });
    await toggle.click();
    await page.getByRole("button", { name: "Create organization" }).waitFor();
    expect(await page.locator("#org-menu li").count()).toBe(0);
    await page.keyboard.press("Escape");
    expect(await page.locator("#org-menu").count()).toBe(0);
    expect(await page.evaluate("document.activeElement.className")).toBe("org-toggle");

    // The sidebar holds from 1024 px; below, the Menu button takes its place.
    await page.setViewportSize({ width: 1024, height: 900 });
    expect(await nav.isVisible()).toBe(true);
    await page.setViewportSize({ width: 1023, height: 900 });
    expect(await nav.isVisible()).toBe(false);
    expect(await page.getByRole("button", { name: "Menu", exact: true }).isVisible()).toBe(true);
    await c.screen("shell");
  }, 60_000);

  it("creates a second organization from the switcher, which the console then opens", async () => {
    const { page } = c;
    await page.getByRole("button", { name: "Organization options" }).click();
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.getByRole("heading", { name: "Create an organization" }).waitFor();
    // One field: the user already has a name. Empty, it says so in words.
    expect(await page.getByLabel("Your name").count()).toBe(0);
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.locator(".field .issue").getByText("is required").waitFor();
    await page.getByLabel("Organization name").fill("Difference Engines");
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.getByRole("heading", { name: "Your plan" }).waitFor();
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("button", { name: "Playground" }).click();
    await page.getByRole("heading", { name: "Playground", level: 1 }).waitFor();
    expect(await organizationOf(page).textContent()).toBe("Difference Engines");
    const mine = (await (await asUser(page, "/api/organizations")).json()) as {
      data: { organization: { id: string; name: string }; membership: { role: string } }[];
    };
    expect(mine.data.map((m) => [m.organization.name, m.membership.role])).toEqual([
      ["Difference Engines", "owner"],
      ["Analytical Engines", "owner"],
    ]);
    await promptIn(page, mine.data[0]?.organization.id ?? "", "Babbage drafts");
    await sidebarNav(page).getByRole("link", { name: "Prompts" }).click();
    expect(await promptNames(page)).toEqual(["Babbage drafts"]);
  }, 60_000);

  it("switches organization: the list follows, a detail page gives way to its list, reload and new tab keep it", async () => {
    const { page } = c;
    // A detail page of the second organization.
    await page.getByRole("link", { name: "Babbage drafts" }).click();
    await page.getByRole("heading", { name: "Babbage drafts", level: 1 }).waitFor();

    await page.getByRole("button", { name: "Switch organization" }).click();
    const menu = page.locator("#org-menu");
    const options = menu.getByRole("listitem");
    expect(await options.allTextContents()).toEqual(["Difference Engines owner", "Analytical Engines owner"]);
    expect(await menu.locator('[aria-current="true"]').textContent()).toBe("Difference Engines owner");
    await c.screen("org-switcher");
    await menu.getByRole("button", { name: /^Analytical Engines/ }).click();

    await organizationOf(page).getByText("Analytical Engines").waitFor();
    expect(new URL(page.url()).pathname).toBe("/prompts");
    expect(await promptNames(page)).toEqual(["Engine notes"]);
    expect(await sidebarNav(page).locator('a[aria-current="page"]').textContent()).toBe("Prompts");

    // Kept by a reload, and by a new tab of the same browser.
    await page.reload();
    expect(await promptNames(page)).toEqual(["Engine notes"]);
    expect(await organizationOf(page).textContent()).toBe("Analytical Engines");
    const tab = await page.context().newPage();
    await tab.goto(`${c.base}/prompts`);
    expect(await promptNames(tab)).toEqual(["Engine notes"]);
    expect(await organizationOf(tab).textContent()).toBe("Analytical Engines");
    await tab.close();

    // And back, in a second tab: the page read again for the other organization, and the first
    // tab, left open on a prompt of the organization it leaves, follows to the list.
    const other = await page.context().newPage();
    await other.goto(`${c.base}/prompts`);
    await page.getByRole("link", { name: "Engine notes" }).click();
    await page.getByRole("heading", { name: "Engine notes", level: 1 }).waitFor();
    await other.getByRole("button", { name: "Switch organization" }).click();
    await other
      .locator("#org-menu")
      .getByRole("button", { name: /^Difference Engines/ })
      .click();
    await organizationOf(other).getByText("Difference Engines").waitFor();
    expect(await promptNames(other)).toEqual(["Babbage drafts"]);
    await organizationOf(page).getByText("Difference Engines").waitFor();
    expect(new URL(page.url()).pathname).toBe("/prompts");
    expect(await promptNames(page)).toEqual(["Babbage drafts"]);
    await other.close();
  }, 60_000);

  it("opens the sidebar as a drawer at 390 px with the keyboard: focus kept inside, Escape closes", async () => {
    const { page } = c;
    await page.setViewportSize({ width: 390, height: 900 });
    const menu = page.getByRole("button", { name: "Menu", exact: true });
    const drawer = page.getByRole("dialog", { name: "Menu" });
    expect(await sidebarNav(page).isVisible()).toBe(false);
    expect(await page.locator(".topbar-org").textContent()).toBe("Difference Engines");
    await menu.focus();
    await page.keyboard.press("Enter");
    await drawer.waitFor();
    expect(await menu.getAttribute("aria-expanded")).toBe("true");
    const focusInDrawer = () => page.evaluate("document.getElementById('sidebar').contains(document.activeElement)");
    expect(await focusInDrawer()).toBe(true);
    expect(await drawer.locator('a[aria-current="page"]').textContent()).toBe("Prompts");
    // Round and round: Tab never leaves the drawer, nor does Shift+Tab.
    const stops = await drawer.locator("a[href], button").count();
    for (let i = 0; i < stops + 2; i++) {
      await page.keyboard.press("Tab");
      expect(await focusInDrawer(), `Tab ${i + 1}`).toBe(true);
    }
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press("Shift+Tab");
      expect(await focusInDrawer(), `Shift+Tab ${i + 1}`).toBe(true);
    }
    const overflow = (await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")) as number;
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: "test-artifacts/console/shell-drawer-390.png" });

    await page.keyboard.press("Escape");
    expect(await drawer.count()).toBe(0);
    expect(await sidebarNav(page).isVisible()).toBe(false);
    expect(await page.evaluate("document.activeElement.className")).toBe("menu-toggle");
    expect(await menu.getAttribute("aria-expanded")).toBe("false");

    // Open again and follow a link: the drawer closes on the way, the new page marked.
    await page.keyboard.press("Enter");
    await drawer.getByRole("link", { name: "Members" }).click();
    await page.getByRole("heading", { name: "Members", level: 1 }).waitFor();
    expect(await drawer.count()).toBe(0);
    await menu.click();
    expect(await drawer.locator('a[aria-current="page"]').textContent()).toBe("Members");
    await c.screen("shell-drawer");
  }, 60_000);
});
