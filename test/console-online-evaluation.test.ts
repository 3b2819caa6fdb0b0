/**
 * The console's online evaluation screen (issue #36) in Debian's chromium, through the UI: a rule
 * created with the target picked from lists (a prompt and its label, no id typed), a refused
 * sample rate shown at its field, the scores of labelled runs (made with the SDK) in a table
 * linking to each run, the chart over time with its figures, and the rule edited, paused and
 * deleted. Each screen is checked with axe at 1366 px and 390 px and photographed.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";

let b: ConsoleBrowser;
let page: Page;

beforeAll(async () => {
  b = await openConsole();
  page = b.page;
}, 60_000);

afterAll(async () => {
  await b?.close();
});

describe("online evaluation in the console", () => {
  it("creates a rule from pickers, shows its scores and chart, edits, pauses and deletes it", async () => {
    await signUp(page, b.base, "Samplers");
    const { sdk, organizationId } = await consoleSdk(page, b.base);
    const greeter = await sdk.prompts.create({ organizationId, name: "Greeter", defaultModel: "local/echo" });
    const v1 = await sdk.prompts.createVersion(greeter.id, { systemPrompt: "Hello there." });
    await sdk.prompts.publish(greeter.id, { versionId: v1.id });

    await page.getByRole("link", { name: "Online evaluation" }).click();
    await page.getByRole("heading", { name: "Online evaluation" }).waitFor();
    await page.getByText("No rule yet: create one below.").waitFor();
    const form = page.getByRole("form", { name: "New online rule" });
    await form.getByLabel("Rule name").fill("Says hello");
    await form.getByLabel("The prompt").selectOption({ label: "Greeter" });
    await form.getByLabel("Label").selectOption({ label: "only runs through production" });
    await form.getByLabel("Text the output contains").fill("Hello");
    // A rate of 0 is refused, shown at its field, and nothing is created.
    await form.getByLabel("Sample rate (% of matching runs scored)").fill("0");
    await form.getByRole("button", { name: "Create rule" }).click();
    await form.getByText("must be a number greater than 0 and at most 1").waitFor();
    expect((await sdk.onlineRules.list({ organizationId })).data).toEqual([]);
    await b.screen("online-evaluation-refused");

    await form.getByLabel("Sample rate (% of matching runs scored)").fill("100");
    await form.getByRole("button", { name: "Create rule" }).click();
    const rules = page.getByRole("region", { name: "Online rules" });
    await rules.getByRole("cell", { name: "Says hello", exact: true }).waitFor();
    await expect(rules.getByRole("cell", { name: "prompt Greeter @ production", exact: true }).count()).resolves.toBe(
      1,
    );
    const [rule] = (await sdk.onlineRules.list({ organizationId })).data;
    expect(rule).toMatchObject({ sampleRate: 1, target: { kind: "prompt", id: greeter.id, label: "production" } });

    const runs = [];
    for (let i = 0; i < 3; i++)
      runs.push(await sdk.prompts.run(greeter.id, { organizationId, variables: {}, label: "production" }));
    await sdk.prompts.run(greeter.id, { organizationId, variables: {} });
    const scores = page.getByRole("region", { name: "Scores", exact: true });
    for (let i = 0; i < 50; i++) {
      await page.getByRole("button", { name: "Refresh scores" }).click();
      if ((await scores.getByRole("link").count()) === 3) break;
      await page.waitForTimeout(200);
    }
    expect((await scores.getByRole("link").allTextContents()).sort()).toEqual(runs.map((r) => r.id).sort());
    await page.getByRole("img", { name: /Pass rate and mean judge score per hour/ }).waitFor();
    const figures = page.getByRole("region", { name: "Scores over time" });
    await expect(figures.getByRole("cell", { name: "100%", exact: true }).count()).resolves.toBe(1);
    await expect(figures.getByRole("cell", { name: "3", exact: true }).count()).resolves.toBe(1);
    // The version is named by its prompt and number, not by its id.
    await figures.getByRole("cell", { name: "Greeter v1 · production", exact: true }).waitFor();
    await b.screen("online-evaluation");

    await scores.getByRole("link", { name: runs[0]?.id }).click();
    await page.getByRole("heading", { name: /Run/ }).first().waitFor();
    expect(new URL(page.url()).pathname).toBe(`/runs/${runs[0]?.id}`);
    await page.goBack();

    await page.getByRole("button", { name: "Edit Says hello" }).click();
    const edit = page.getByRole("form", { name: "Edit rule Says hello" });
    await edit.getByLabel("Sample rate (% of matching runs scored)").fill("25");
    await edit.getByRole("button", { name: "Save rule" }).click();
    await rules.getByRole("cell", { name: "25%", exact: true }).waitFor();
    await page.getByRole("button", { name: "Pause Says hello" }).click();
    await rules.getByRole("cell", { name: "paused", exact: true }).waitFor();
    expect(await sdk.onlineRules.get(rule?.id ?? "")).toMatchObject({ sampleRate: 0.25, enabled: false });
    await b.screen("online-evaluation-paused");
    await page.getByRole("button", { name: "Delete Says hello" }).click();
    await page.getByText("No rule yet: create one below.").waitFor();
  });
});
