/**
 * The console's Usage page (issue #49 "Console") in Debian's chromium: after runs of a priced model
 * (the OpenAI stub: a remote provider cannot exist here), some made by the signed-in user and some
 * with an API key, the page shows the Free plan's runs used this month against its limit, the
 * period's spend and tokens equal to the sum over the stored runs, the day's bar, and the spend by
 * model, by prompt (its name, not its id) and by API key (the key's name; the user's runs as
 * "signed-in members and services"), with a CSV that the browser's session downloads. Screens are
 * checked with axe at 1366 px and 390 px and photographed into test-artifacts/console/.
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { type OpenAIStub, startOpenAIStub } from "@kiln/testing/openai-stub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";

let c: ConsoleBrowser;
let stub: OpenAIStub;

beforeAll(async () => {
  stub = await startOpenAIStub();
  const providers = JSON.stringify([
    {
      id: "stub",
      baseUrl: stub.baseUrl,
      models: [{ model: "priced", inputPerMTokUsd: 1_000, outputPerMTokUsd: 2_000 }],
    },
  ]);
  c = await openConsole({ providers: loadProvidersConfig({ OPENAI_COMPATIBLE_PROVIDERS: providers }) });
  await signUp(c.page, c.base, "Jacquard Looms");
}, 60_000);

afterAll(async () => {
  await c?.close();
  await stub?.close();
});

const money = (usd: number) =>
  `$${usd.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 4 })}`;

describe("the console's Usage page", () => {
  it("shows the plan's runs used, the period's spend and its breakdowns, as the stored runs add up", async () => {
    const { page, base } = c;
    const { sdk, organizationId } = await consoleSdk(page, base);
    const prompt = await sdk.prompts.create({ organizationId, name: "Invoice reader" });
    const version = await sdk.prompts.createVersion(prompt.id, { systemPrompt: "Read it.", model: "stub/priced" });
    await sdk.prompts.publish(prompt.id, { versionId: version.id });
    const cookie = (await page.context().cookies(`${base}/api`)).find((k) => k.name === "kiln_session");
    const asUser = { authorization: `Bearer ${cookie?.value}`, "content-type": "application/json" };
    const created = await fetch(`${base}/api/api-keys`, {
      method: "POST",
      headers: asUser,
      body: JSON.stringify({ organizationId, name: "Batch job", scopes: ["prompts:read", "runs:write"] }),
    });
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };
    const run = async (authorization: string) => {
      const r = await fetch(`${base}/api/prompts/${prompt.id}/run`, {
        method: "POST",
        headers: { authorization, "content-type": "application/json" },
        body: JSON.stringify({ organizationId, variables: {} }),
      });
      expect(r.status).toBe(201);
      return (await r.json()) as { estimatedCostUsd: number; usage: { inputTokens: number; outputTokens: number } };
    };
    const runs = [
      await run(asUser.authorization),
      await run(asUser.authorization),
      await run(`Bearer ${key}`),
      await run(`Bearer ${key}`),
      await run(`Bearer ${key}`),
    ];
    const cost = runs.reduce((sum, r) => sum + r.estimatedCostUsd, 0);
    expect(cost).toBeGreaterThan(0);
    // The ledger counts off the request path (docs/usage.md): read until it has the five runs.
    for (let tries = 0; ; tries++) {
      const u = await fetch(`${base}/api/usage?organizationId=${organizationId}`, { headers: asUser });
      if (((await u.json()) as { totals: { runs: number } }).totals.runs >= runs.length) break;
      if (tries > 50) throw new Error("the ledger never counted the runs");
      await new Promise((r) => setTimeout(r, 200));
    }

    await page.getByRole("link", { name: "Usage" }).click();
    await page.getByRole("heading", { level: 1, name: "Usage" }).waitFor();
    await page.getByText("Free plan: 5 of 1,000 runs this month.").waitFor();
    expect(await page.getByRole("meter", { name: "Runs used this month" }).getAttribute("value")).toBe("5");
    const totals = page.getByRole("definition").first();
    expect(await totals.textContent()).toBe(money(cost));
    expect(await page.getByText("0 answered from the cache, saving $0.00").count()).toBe(1);
    const today = new Date().toISOString().slice(0, 10);
    const bars = page.getByRole("list", { name: "Spend per day" });
    expect(await bars.getByRole("listitem").filter({ hasText: today }).textContent()).toContain(
      `${money(cost)} · 5 runs`,
    );

    const table = (name: string) => page.getByRole("region", { name });
    await table("Usage by model").getByRole("row").filter({ hasText: "stub/priced" }).waitFor();
    expect(await table("Usage by model").getByRole("row").filter({ hasText: "stub/priced" }).textContent()).toContain(
      money(cost),
    );
    await page.getByLabel("Break down by").selectOption("prompt");
    const byPrompt = table("Usage by prompt").getByRole("row").filter({ hasText: "Invoice reader" });
    await byPrompt.waitFor();
    expect(await byPrompt.textContent()).not.toContain(prompt.id);
    await page.getByLabel("Break down by").selectOption("apiKey");
    const byKey = table("Usage by API key");
    const keyRow = byKey.getByRole("row").filter({ hasText: "Batch job" });
    await keyRow.waitFor();
    expect(await keyRow.getByRole("cell").nth(1).textContent()).toBe("3");
    expect(
      await byKey
        .getByRole("row")
        .filter({ hasText: "signed-in members and services" })
        .getByRole("cell")
        .nth(1)
        .textContent(),
    ).toBe("2");

    // A budget on the API key, set from the page: its spend so far against its limit.
    const form = page.getByRole("form", { name: "Set a budget" });
    await form.getByLabel("Budget name").fill("Batch cap");
    await form.getByLabel("Limit (USD)").fill("1");
    await form.getByLabel("On", { exact: true }).selectOption("api_key");
    await form.getByLabel("One API key").selectOption({ label: "Batch job" });
    await form.getByRole("button", { name: "Set budget" }).click();
    const budget = page.getByRole("region", { name: "Budget list" }).getByRole("row").filter({ hasText: "Batch cap" });
    await budget.waitFor();
    expect(await budget.textContent()).toContain("$1.00 a month on API key Batch job");
    expect(await budget.textContent()).toContain("runs refused");
    const keyCost = runs.slice(2).reduce((sum, r) => sum + r.estimatedCostUsd, 0);
    expect(await budget.textContent()).toContain(`${money(keyCost)} of $1.00`);
    // A limit the API refuses is told next to its field.
    await form.getByLabel("Budget name").fill("Broken");
    await form.getByLabel("Limit (USD)").fill("-5");
    await form.getByLabel("On", { exact: true }).selectOption("organization");
    await form.getByRole("button", { name: "Set budget" }).click();
    await form
      .locator(".field", { has: page.getByLabel("Limit (USD)") })
      .locator(".issue")
      .waitFor();
    await c.screen("usage");

    // The CSV the link downloads, through the browser's own session.
    const href = await page.getByRole("link", { name: "Download CSV" }).getAttribute("href");
    const csv = (await page.evaluate(`fetch(${JSON.stringify(href)}).then((r) => r.text())`)) as string;
    const [header, ...lines] = csv.trim().split("\r\n");
    expect(header?.startsWith("apiKeyId,runs,")).toBe(true);
    expect(lines).toHaveLength(2);
  }, 120_000);
});
