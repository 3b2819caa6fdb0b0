/**
 * Prompt folders and partials in the console (issue #50; docs/api.md "Folders", "Partials"), in
 * Debian's chromium through the UI: the prompts page lists the top-level folders as rows with their
 * counts, opening one goes to /prompts/in/<path> with a breadcrumb back up, a prompt made there is
 * named inside it; a version's includes are listed on it, each a link to the included prompt, and
 * the editor's preview shows a partial's tag. Every screen is checked with axe and photographed.
 */
import type { Kiln } from "@kiln/sdk";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";

let b: ConsoleBrowser;
let page: Page;
let sdk: Kiln;
let organizationId: string;

beforeAll(async () => {
  b = await openConsole();
  page = b.page;
}, 60_000);

afterAll(async () => {
  await b?.close();
});

/** The rows of the prompts page's list, as their text. */
const rows = (p: Page) => p.getByRole("region", { name: /^(All prompts|In .+)$/ }).getByRole("listitem");

describe("prompt folders and partials in the console", () => {
  it("lists folders as rows to open, with a breadcrumb back up", async () => {
    await signUp(page, b.base, "Folded Paper");
    ({ sdk, organizationId } = await consoleSdk(page, b.base));
    for (const name of ["Welcome", "support/faq", "support/billing/refund", "support/billing/invoice", "sales/pitch"]) {
      await sdk.prompts.create({ organizationId, name });
    }
    await page.reload();
    const list = rows(page);
    await list.filter({ hasText: "support/" }).waitFor();
    expect(await list.allTextContents()).toEqual([
      "▸sales/ folder: 1 prompt",
      "▸support/ folder: 3 prompts, 1 folder",
      "Welcome 0 versions",
    ]);
    await b.screen("prompt-folders");

    await page.getByRole("link", { name: "support/", exact: true }).click();
    await page.waitForURL(`${b.base}/prompts/in/support`);
    await page.getByRole("heading", { name: "support", exact: true }).waitFor();
    await page.getByRole("heading", { name: "In support" }).waitFor();
    const crumbs = page.getByRole("navigation", { name: "Breadcrumb" });
    expect(await crumbs.getByRole("listitem").allTextContents()).toEqual(["Prompts", "support"]);
    await rows(page).filter({ hasText: "faq" }).waitFor();
    expect(await rows(page).allTextContents()).toEqual(["▸billing/ folder: 2 prompts", "faq 0 versions"]);

    await page.getByRole("link", { name: "billing/", exact: true }).click();
    await page.waitForURL(`${b.base}/prompts/in/support/billing`);
    await rows(page).filter({ hasText: "refund" }).waitFor();
    expect((await rows(page).allTextContents()).sort()).toEqual(["invoice 0 versions", "refund 0 versions"]);
    expect(await crumbs.getByRole("listitem").allTextContents()).toEqual(["Prompts", "support", "billing"]);
    expect(await crumbs.locator('[aria-current="page"]').textContent()).toBe("billing");
    await b.screen("prompt-folder");
    // Search within the folder.
    await page.getByLabel("Search prompts").fill("ref");
    expect(await rows(page).allTextContents()).toEqual(["refund 0 versions"]);
    await page.getByLabel("Search prompts").fill("");

    // A new prompt here is named inside the folder.
    expect(await page.getByLabel("Name").inputValue()).toBe("support/billing/");
    await page.getByLabel("Name").fill("support/billing/credit");
    await page.getByRole("button", { name: "Create prompt" }).click();
    await page.getByRole("heading", { name: "support/billing/credit" }).waitFor();
    // The prompt's page leads back to its folders.
    await crumbs.getByRole("link", { name: "billing" }).click();
    await page.waitForURL(`${b.base}/prompts/in/support/billing`);
    await rows(page).filter({ hasText: "credit" }).waitFor();
    await crumbs.getByRole("link", { name: "support" }).click();
    await rows(page).filter({ hasText: "billing/" }).filter({ hasText: "3 prompts" }).waitFor();
    await crumbs.getByRole("link", { name: "Prompts" }).click();
    await page.waitForURL(`${b.base}/prompts`);
    await rows(page).filter({ hasText: "4 prompts" }).waitFor();
    // Back and forward walk the folders too.
    await page.goBack();
    await page.waitForURL(`${b.base}/prompts/in/support`);
    await rows(page).filter({ hasText: "faq" }).waitFor();
  });

  it("lists what a version includes, each a link to the included prompt", async () => {
    const tone = await sdk.prompts.create({ organizationId, name: "shared/tone" });
    const schema = { type: "object", properties: { mood: { type: "string" } } };
    const tv = await sdk.prompts.createVersion(tone.id, { systemPrompt: "Be {{mood}}.", variablesSchema: schema });
    await sdk.prompts.publish(tone.id, { versionId: tv.id });
    await sdk.prompts.labels.set(tone.id, "staging", tv.id);
    const greeter = await sdk.prompts.create({ organizationId, name: "greeter", defaultModel: "local/echo" });
    await sdk.prompts.createVersion(greeter.id, {
      systemPrompt: "Hello.\n{{> shared/tone}}\nSigned: {{> shared/tone@staging}} {{> missing/one}}",
      variablesSchema: schema,
      message: "Reuses the shared tone",
    });
    await page.goto(`${b.base}/prompts/${greeter.id}`);
    await page.getByRole("heading", { name: "greeter" }).waitFor();
    const includes = page.locator("td.content .includes");
    await includes.getByRole("link", { name: "shared/tone@staging" }).waitFor();
    expect(await includes.textContent()).toBe("includes shared/tone, shared/tone@staging, missing/one");
    expect(await includes.getByRole("link").allTextContents()).toEqual(["shared/tone", "shared/tone@staging"]);
    // A name no prompt has is shown, not linked.
    expect(await includes.getByRole("link", { name: "missing/one" }).count()).toBe(0);
    // The editor's preview shows the tag of a partial, marked, where its text goes at run time.
    const preview = page.getByRole("note", { name: "Prompt preview" });
    await preview.waitFor();
    expect(await preview.locator("mark").allTextContents()).toEqual([
      "{{> shared/tone}}",
      "{{> shared/tone@staging}}",
      "{{> missing/one}}",
    ]);
    expect(await preview.textContent()).toContain("{{> shared/tone}}\nSigned: ");
    await b.screen("prompt-includes");

    await includes.getByRole("link", { name: "shared/tone@staging" }).click();
    await page.getByRole("heading", { name: "shared/tone" }).waitFor();
    expect(page.url()).toBe(`${b.base}/prompts/${tone.id}`);
    const crumbs = page.getByRole("navigation", { name: "Breadcrumb" });
    expect(await crumbs.getByRole("link").allTextContents()).toEqual(["Prompts", "shared"]);
  });
});
