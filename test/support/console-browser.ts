/**
 * The console in Debian's chromium (playwright-core) against the embedded platform serving
 * console/dist, for the browser suites: axe-core injected into every document, and `screen(name)`,
 * which checks a screen (no serious or critical axe violation, nothing wider than the window) and
 * photographs it into test-artifacts/console/ at 1366 px and 390 px.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { EmbeddedOptions } from "@kiln/launcher/embedded";
import { Kiln } from "@kiln/sdk";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import { ROOT } from "../bench/load.js";
import { type EmbeddedKiln, startEmbedded } from "./embedded.js";

const CONSOLE_DIR = join(ROOT, "console/dist");
const ARTIFACTS = join(ROOT, "test-artifacts/console");
export const WIDTHS = [1366, 390] as const;

export interface ConsoleBrowser {
  base: string;
  page: Page;
  /** Checks and photographs a screen of `page` (default: the main page). */
  screen: (name: string, page?: Page) => Promise<void>;
  /** A page in a new context of the same browser (its own cookies, as another person's browser), axe injected. */
  newPage: () => Promise<Page>;
  close: () => Promise<void>;
}

/** `options`: the embedded platform's, e.g. `providers` (a provider stub for streamed answers). */
export async function openConsole(options: Partial<EmbeddedOptions> = {}): Promise<ConsoleBrowser> {
  expect(existsSync(join(CONSOLE_DIR, "index.html")), "console/dist: pnpm test builds it first").toBe(true);
  mkdirSync(ARTIFACTS, { recursive: true });
  const { kiln, baseUrl } = await startEmbedded({ ...options, consoleDir: CONSOLE_DIR });
  const browser: Browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-background-networking"],
  });
  const axe = readFileSync(join(ROOT, "node_modules/axe-core/axe.min.js"), "utf8");
  const newPage = async () => {
    const context = await browser.newContext();
    await context.addInitScript({ content: axe });
    return context.newPage();
  };
  // One context (one cookie jar) for every tab of the test, as in one browser window.
  const main = await newPage();
  const screen = async (name: string, page = main) => {
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      // Evaluated in the page (a string: this file is compiled without the DOM's types).
      const result = (await page.evaluate("axe.run(document)")) as {
        violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
      };
      const serious = result.violations
        .filter((v) => v.impact === "serious" || v.impact === "critical")
        .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
      expect(serious, `${name} at ${width}px`).toEqual([]);
      const overflow = (await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")) as number;
      expect(overflow, `${name} overflows at ${width}px`).toBeLessThanOrEqual(0);
      await page.screenshot({ path: join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
    }
    await page.setViewportSize({ width: WIDTHS[0], height: 900 });
  };
  const close = async () => {
    await browser.close();
    await (kiln as EmbeddedKiln).close();
  };
  return { base: baseUrl, page: main, screen, newPage, close };
}

/** A new user signed up through the console, with a workspace, on the Prompts page: their credentials. */
export async function signUp(
  page: Page,
  base: string,
  organization: string,
): Promise<{ email: string; password: string }> {
  const email = `console-${Date.now()}@example.test`;
  const password = "correct-horse-battery";
  await page.goto(`${base}/signup`);
  await page.getByLabel("Full name").fill("Ada Lovelace");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign up" }).click();
  await page.getByLabel("Organization name").fill(organization);
  await page.getByRole("button", { name: "Create workspace" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByRole("button", { name: "Playground" }).click();
  await page.getByRole("link", { name: "Prompts" }).click();
  await page.getByRole("heading", { name: "Prompts", exact: true }).waitFor();
  return { email, password };
}

/**
 * An SDK client acting as the console's signed-in user, and their organization: the test reads the
 * httpOnly session cookie through the browser's own API (no script in the page can).
 */
export async function consoleSdk(page: Page, base: string): Promise<{ sdk: Kiln; organizationId: string }> {
  const cookie = (await page.context().cookies(`${base}/api`)).find((c) => c.name === "kiln_session");
  if (!cookie) throw new Error("the console is not signed in: no session cookie");
  const sdk = new Kiln({ baseUrl: base, accessToken: cookie.value });
  const organizationId = (await sdk.setup.verify({})).organization?.id;
  if (!organizationId) throw new Error("the console's user has no organization");
  return { sdk, organizationId };
}
