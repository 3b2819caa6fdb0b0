/**
 * The playground as the editor (issue #50) in Debian's chromium, through the UI, local/echo
 * answering the text it was sent: a published version opened for editing in the playground, its
 * template and variables schema changed and run without saving (the variables form follows the
 * edited schema; no version is made), a draft the API refuses shown at its field with nothing
 * stored, the edits run side by side with the published version, kept across a visit to another
 * page, and saved as a new version. Each screen is checked with axe at 1366 px and 390 px.
 */
import type { Kiln } from "@kiln/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";

let ui: ConsoleBrowser;
let sdk: Kiln;
let organizationId: string;
let promptId: string;

let token: string;
/** The organization's stored runs (GET /api/runs, the console's own non-public read). */
async function readRuns(): Promise<{ id: string; kind: string; draft?: boolean; promptVersionId?: string }[]> {
  const res = await fetch(`${ui.base}/api/runs?organizationId=${organizationId}&limit=100`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: never[] }).data;
}
const runCount = async () => (await readRuns()).length;

beforeAll(async () => {
  ui = await openConsole();
  await signUp(ui.page, ui.base, "Editors");
  ({ sdk, organizationId } = await consoleSdk(ui.page, ui.base));
  token = (await ui.page.context().cookies(`${ui.base}/api`)).find((c) => c.name === "kiln_session")?.value ?? "";
  const prompt = await sdk.prompts.create({ organizationId, name: "Greeter" });
  promptId = prompt.id;
  const v1 = await sdk.prompts.createVersion(prompt.id, {
    systemPrompt: "Greet {{person}}.",
    variablesSchema: { type: "object", properties: { person: { type: "string" } }, required: ["person"] },
    model: "local/echo",
  });
  await sdk.prompts.publish(prompt.id, { versionId: v1.id });
}, 120_000);

afterAll(async () => {
  await ui?.close();
});

describe("the playground as the editor", () => {
  it("edits a version in place and runs the edits without saving them", async () => {
    const { page } = ui;
    await page.getByRole("link", { name: "Playground", exact: true }).click();
    await page.getByRole("heading", { name: "Playground" }).waitFor();
    await page.getByLabel("Prompt or skill").selectOption({ label: "Greeter" });
    await page.getByRole("button", { name: "Edit this version here" }).click();
    const edits = page.getByRole("group", { name: "Unsaved edits of version 1" });
    const system = edits.getByLabel("System prompt", { exact: true });
    expect(await system.inputValue()).toBe("Greet {{person}}.");
    await system.fill("Welcome {{person}} from {{city}}.");
    await edits
      .getByLabel("Variables schema (JSON)")
      .fill(JSON.stringify({ type: "object", properties: { person: { type: "string" }, city: { type: "string" } } }));
    // The variables form follows the edited schema.
    await page.getByLabel("person", { exact: true }).fill("Ada");
    await page.getByLabel("city", { exact: true }).fill("London");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    const card = page.getByRole("article").first();
    await card.getByRole("link", { name: "Open the stored run" }).waitFor();
    expect(await card.locator("h3").textContent()).toBe("Greeter · unsaved edits of v1");
    expect(await card.locator("pre").textContent()).toBe("Welcome Ada from London.");
    const runId = (await card.getByRole("link", { name: "Open the stored run" }).getAttribute("href"))
      ?.split("/")
      .pop();
    const stored = (await readRuns()).find((r) => r.id === runId);
    expect(stored).toMatchObject({ kind: "prompt", draft: true, promptVersionId: "" });
    expect((await sdk.prompts.get(promptId)).latestVersion).toBe(1);
    await ui.screen("playground-edits");
    // The run's page shows the messages the edits sent (its template is the run's own input.draft).
    await card.getByRole("link", { name: "Open the stored run" }).click();
    await page.getByRole("heading", { name: `prompt run ${runId}` }).waitFor();
    await page.locator(".message pre").getByText("Welcome Ada from London.").waitFor();
    await page.getByRole("link", { name: "Playground", exact: true }).click();
    await page.getByRole("group", { name: "Unsaved edits of version 1" }).waitFor();
  }, 60_000);

  it("shows what the API refuses in the edits at its field, storing no run", async () => {
    const { page } = ui;
    const edits = page.getByRole("group", { name: "Unsaved edits of version 1" });
    await edits.getByLabel("System prompt", { exact: true }).fill("Hello {{nobody}}.");
    const before = await runCount();
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await edits.getByText(/uses \{\{nobody\}\}/).waitFor();
    expect(await runCount()).toBe(before);
    await edits.getByLabel("System prompt", { exact: true }).fill("Welcome {{person}} from {{city}}.");
  }, 60_000);

  it("runs the edits beside the published version, keeps them across pages, and saves them as a new version", async () => {
    const { page } = ui;
    await page.getByLabel("Compare side by side with another version or model").check();
    await page.getByRole("button", { name: "Run both" }).click();
    const pair = page
      .locator(".side-by-side")
      .filter({ has: page.getByRole("article") })
      .first();
    await pair.getByRole("article").nth(1).getByRole("link", { name: "Open the stored run" }).waitFor();
    const texts = await pair.locator("article pre").allTextContents();
    expect(texts).toEqual(["Welcome Ada from London.", "Greet Ada."]);
    await page.getByLabel("Compare side by side with another version or model").uncheck();

    await page.getByRole("link", { name: "Runs", exact: true }).click();
    await page.getByRole("heading", { name: "Runs", exact: true }).waitFor();
    await page.getByRole("link", { name: "Playground", exact: true }).click();
    const edits = page.getByRole("group", { name: "Unsaved edits of version 1" });
    expect(await edits.getByLabel("System prompt", { exact: true }).inputValue()).toBe(
      "Welcome {{person}} from {{city}}.",
    );

    await page.getByRole("button", { name: "Save as a new version" }).click();
    await page.getByRole("status").getByText("Saved as version 2").waitFor();
    const saved = await sdk.prompts.get(promptId);
    expect(saved.latestVersion).toBe(2);
    const v2 = await sdk.prompts.get(promptId, { versionId: saved.versions.at(-1)?.id ?? "" });
    expect(v2.version?.systemPrompt).toBe("Welcome {{person}} from {{city}}.");
    expect(v2.version?.message).toBe("Edited in the playground from version 1");
    await page.getByRole("group", { name: "Unsaved edits of version 2" }).waitFor();
    await page.getByRole("button", { name: "Discard the edits" }).click();
    await page.getByRole("button", { name: "Edit this version here" }).waitFor();
  }, 60_000);
});
