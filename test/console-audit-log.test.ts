/**
 * The console's Audit log page (issue #51 "Console page with filters") in Debian's chromium: after
 * an owner's changes (a prompt created, a version published, an API key made) and a change made
 * with that key, the page lists them newest first with who made each ("you", the key by its name),
 * its action, target and the fields it set; filters by action and by target narrow the list; the
 * chain is verified on demand; the filtered entries download as JSON Lines that the API wrote.
 * Screens are checked with axe at 1366 px and 390 px and photographed into test-artifacts/console/.
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";

let c: ConsoleBrowser;

beforeAll(async () => {
  c = await openConsole();
  await signUp(c.page, c.base, "Babbage Analytical");
}, 60_000);

afterAll(async () => {
  await c?.close();
});

describe("the console's Audit log page", () => {
  it("lists who changed what, filters it, verifies the chain and exports JSON Lines", async () => {
    const { page, base } = c;
    const { sdk, organizationId } = await consoleSdk(page, base);
    const prompt = await sdk.prompts.create({ organizationId, name: "Difference table" });
    const version = await sdk.prompts.createVersion(prompt.id, { systemPrompt: "Tabulate the differences." });
    await sdk.prompts.publish(prompt.id, { versionId: version.id });
    const cookie = (await page.context().cookies(`${base}/api`)).find((k) => k.name === "kiln_session");
    const created = await fetch(`${base}/api/api-keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${cookie?.value}`, "content-type": "application/json" },
      body: JSON.stringify({ organizationId, name: "Release bot", scopes: ["prompts:read", "prompts:write"] }),
    });
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };
    // A change made with the key: its entry names the key.
    const byKey = await fetch(`${base}/api/prompts`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ organizationId, name: "Bot's prompt" }),
    });
    expect(byKey.status).toBe(201);

    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { level: 1, name: "Audit log" }).waitFor();
    const table = page.getByRole("region", { name: "Audit entries" });
    await table.getByRole("cell", { name: "prompt.version.published" }).waitFor();
    const rows = table.getByRole("row");
    // Newest first: the key's prompt, then the key's creation, the publish, the version, the prompt.
    const actions = (await table.locator("tbody tr td:nth-child(3)").allTextContents()).slice(0, 5);
    expect(actions).toEqual([
      "prompt.created",
      "api_key.created",
      "prompt.version.published",
      "prompt.version.created",
      "prompt.created",
    ]);
    // rows.nth(0) is the header row: the newest entry, the key's prompt, names the key.
    expect(await rows.nth(1).textContent()).toContain("API key “Release bot”");
    expect(await rows.filter({ hasText: "prompt.version.published" }).textContent()).toContain("you");
    // The fields a change set are named, never their values.
    expect(await rows.filter({ hasText: "api_key.created" }).textContent()).toContain("name, organizationId, scopes");
    await c.screen("audit-log");

    // Filtered by action: only the publish.
    const filters = page.getByRole("form", { name: "Filter the audit log" });
    await filters.getByLabel("Action").fill("prompt.version.published");
    await filters.getByRole("button", { name: "Filter entries" }).click();
    await page.getByText("1 change shown: that is all of them.").waitFor();
    // By target: the first prompt's own entries (created, published; its version is a prompt_version).
    await filters.getByLabel("Action").fill("");
    await filters.getByLabel("Target type").fill("prompt");
    await filters.getByLabel("Target id").fill(prompt.id);
    await filters.getByRole("button", { name: "Filter entries" }).click();
    await page.getByText("2 changes shown: that is all of them.").waitFor();

    // The chain, verified.
    await page.getByRole("button", { name: "Verify the chain" }).click();
    const status = page.getByRole("status").filter({ hasText: /^The chain holds: \d+ entries/ });
    await status.waitFor();

    // Exported as the API writes it: one entry a line, the filtered ones.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export JSON Lines" }).click(),
    ]);
    const lines = (await readFile((await download.path()) as string, "utf8")).trim().split("\n");
    const exported = lines.map((l) => JSON.parse(l) as { action: string; target: { id: string } });
    expect(exported.every((e) => e.target.id === prompt.id)).toBe(true);
    expect(exported.map((e) => e.action).sort()).toEqual(["prompt.created", "prompt.version.published"]);
    await c.screen("audit-log-filtered");
    // A prompt's entry links to the prompt.
    await table.getByRole("link", { name: prompt.id }).first().click();
    await page.getByRole("heading", { level: 1, name: "Difference table" }).waitFor();
  }, 120_000);
});
