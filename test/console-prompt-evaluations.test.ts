/**
 * A prompt's evaluations in the console (issue #50, docs/api.md "Prompt evaluations") in Debian's
 * chromium: a dataset chosen on the prompt's page, two versions on a model side by side, an
 * assertion written as a row; the report polled until done, its totals per version × model and each
 * item with its input, expected output and both versions' verdicts linked to their runs; the run
 * listed on the prompt's page. Screens checked with axe at 1366 and 390 px and photographed into
 * test-artifacts/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";

let c: ConsoleBrowser;

beforeAll(async () => {
  c = await openConsole();
  await signUp(c.page, c.base, "Prompt Evaluators");
}, 60_000);

afterAll(async () => {
  await c?.close();
});

describe("a prompt's evaluations in the console", () => {
  it("runs a dataset on two versions side by side and reports each item by version", async () => {
    const { page } = c;
    const { sdk, organizationId } = await consoleSdk(page, c.base);
    const variablesSchema = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
    const greeter = await sdk.prompts.create({ organizationId, name: "Greeter" });
    const v1 = await sdk.prompts.createVersion(greeter.id, { systemPrompt: "Hello {{name}}", variablesSchema });
    await sdk.prompts.publish(greeter.id, { versionId: v1.id });
    await sdk.prompts.createVersion(greeter.id, { systemPrompt: "Goodbye {{name}}", variablesSchema });
    const dataset = await sdk.datasets.create({ organizationId, name: "Names" });
    await sdk.datasets.addItems(dataset.id, {
      items: [{ input: { name: "Ada" }, expectedOutput: "Hello Ada" }, { input: { name: "Grace" } }],
    });

    await page.goto(`${c.base}/prompts/${greeter.id}`);
    const section = page.getByRole("region", { name: "Evaluations" });
    await section.getByText("No evaluation yet: run one above.").waitFor();
    await page.getByLabel("Dataset").selectOption({ label: "Names · 2 items · version 1" });
    await section.getByLabel("v1 (published)").check();
    await section.getByLabel("v2", { exact: true }).check();
    await section.getByLabel("local/echo").check();
    await page.getByLabel("Text the output contains").fill("Hello");
    await section.getByText("2 items × 2 versions × 1 model × 1 attempt").waitFor();
    await c.screen("prompt-evaluation-start");
    await section.getByRole("button", { name: "Run evaluation" }).click();

    await page.getByRole("heading", { level: 1, name: "Prompt evaluation" }).waitFor();
    await page.getByRole("status").getByText("Evaluation completed").waitFor({ timeout: 30_000 });
    const totals = page.getByRole("region", { name: "Totals per target" });
    await page.getByRole("status").getByText("2 items: v1@local/echo 2/2 passed").waitFor();
    await page.getByRole("link", { name: "Names" }).waitFor();
    await totals.getByRole("rowheader", { name: "v1@local/echo" }).waitFor();
    await totals.getByRole("rowheader", { name: "v2@local/echo" }).waitFor();
    const ada = page.getByRole("article", { name: 'Case Item 1: {"name":"Ada"}' });
    await ada.getByText("Hello Ada").first().waitFor();
    expect(await ada.locator(".eval-target").count()).toBe(2);
    for (const summary of await ada.getByText("1 attempt", { exact: true }).all()) await summary.click();
    await ada.getByRole("link", { name: "v1@local/echo run, attempt 1" }).waitFor();
    await ada.getByRole("link", { name: "v2@local/echo run, attempt 1" }).waitFor();
    const [run] = (await sdk.promptEvaluations.list(greeter.id)).data;
    expect(run?.summary?.byTarget["v1@local/echo"]?.passRate).toBe(1);
    expect(run?.summary?.byTarget["v2@local/echo"]?.passRate).toBe(0);
    await c.screen("prompt-evaluation-report");
    await ada.getByRole("link", { name: "v2@local/echo run, attempt 1" }).click();
    await page.getByText("Goodbye Ada").first().waitFor();
    // The run says what it was made for, and leads back to the report.
    await page.getByText("Item of").waitFor();
    await page.getByRole("link", { name: /^evaluation run evr_/ }).click();
    await page.getByRole("heading", { level: 1, name: "Prompt evaluation" }).waitFor();

    await page.getByRole("link", { name: "Greeter" }).click();
    const history = page.getByRole("region", { name: "Evaluation runs" });
    await history.getByText("v1@local/echo, v2@local/echo").waitFor();
    expect(await history.getByRole("row").count()).toBe(2);
  }, 120_000);
});
