/**
 * The console's datasets screens (issue #50, docs/datasets.md) in Debian's chromium: a dataset
 * created from the list, a CSV file imported into it (its items shown with their expected output
 * and metadata, the version moved on), and a file with a bad row refused at that row with nothing
 * imported; an item's input opened in the playground fills the variables of the prompt picked
 * there. Every screen is checked with axe at 1366 px and 390 px and photographed into
 * test-artifacts/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";

let c: ConsoleBrowser;

beforeAll(async () => {
  c = await openConsole();
  await signUp(c.page, c.base, "Dataset Works");
}, 60_000);

afterAll(async () => {
  await c?.close();
});

describe("the console's datasets screens", () => {
  it("creates a dataset, imports a CSV file into it and refuses a file with a bad row", async () => {
    const { page } = c;
    const { sdk, organizationId } = await consoleSdk(page, c.base);

    await page.getByRole("link", { name: "Datasets", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Datasets" }).waitFor();
    await page.getByText("No dataset yet.").waitFor();
    await page.getByRole("button", { name: "Create dataset" }).click();
    await page.getByText("must not be empty").waitFor();
    expect((await sdk.datasets.list({ organizationId })).data).toEqual([]);
    await page.getByLabel("Dataset name").fill("Greetings");
    await page.getByLabel("Description").fill("Who to greet, and how");
    await c.screen("datasets");
    await page.getByRole("button", { name: "Create dataset" }).click();
    await page.getByRole("heading", { level: 1, name: "Greetings" }).waitFor();
    await page.getByText("No item yet.").waitFor();

    await page.getByLabel("File content").fill("name,expected_output,metadata.tier\nAda,Hello Ada,gold\nGrace,,\n");
    await page.getByRole("button", { name: "Import items" }).click();
    await page.getByText("Imported 2 items: version 1.").waitFor();
    await page.getByText("Version 1, 2 items.").waitFor();
    await expect.poll(() => page.locator('section[aria-label="Dataset items"] tbody tr').count()).toBe(2);
    await page.getByText('{"tier":"gold"}').waitFor();
    await c.screen("dataset-items");

    await page.getByLabel("Format").selectOption("jsonl");
    await page.getByLabel("File content").fill('{"input":{"name":"Alan"}}\n{"input":"Edsger"}\n');
    await page.getByRole("button", { name: "Import items" }).click();
    await page.getByText("rows[1].input").waitFor();
    await c.screen("dataset-import-refused");
    const [dataset] = (await sdk.datasets.list({ organizationId })).data;
    expect(dataset).toMatchObject({ name: "Greetings", version: 1, itemCount: 2 });
  }, 120_000);

  it("opens an item's input in the playground, over the prompt picked there", async () => {
    const { page } = c;
    const { sdk, organizationId } = await consoleSdk(page, c.base);
    const prompt = await sdk.prompts.create({ organizationId, name: "Welcomer" });
    const v1 = await sdk.prompts.createVersion(prompt.id, {
      systemPrompt: "Hello {{name}}.",
      variablesSchema: { type: "object", properties: { name: { type: "string" } } },
      model: "local/echo",
    });
    await sdk.prompts.publish(prompt.id, { versionId: v1.id });
    await page.getByRole("link", { name: "Playground", exact: true }).click();
    await page.getByLabel("Prompt or skill").selectOption({ label: "Welcomer" });
    await page.getByRole("link", { name: "Datasets", exact: true }).click();
    await page.getByRole("link", { name: "Greetings" }).click();
    await page.getByRole("heading", { level: 1, name: "Greetings" }).waitFor();
    const adaRow = page.locator('section[aria-label="Dataset items"] tbody tr').filter({ hasText: "Ada" });
    await adaRow.getByRole("link", { name: "Try in the playground" }).click();
    await page.getByRole("heading", { name: "Playground" }).waitFor();
    expect(await page.getByLabel("Prompt or skill").inputValue()).toBe(`prompt:${prompt.id}`);
    await expect.poll(() => page.getByLabel("name", { exact: true }).inputValue()).toBe("Ada");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.getByRole("article").first().getByText("Hello Ada.").waitFor();
  }, 60_000);
});
