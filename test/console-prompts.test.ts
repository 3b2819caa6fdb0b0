/**
 * Prompt editing in the console as a prompt team does it (issue #35), in Debian's chromium through
 * the UI only: the model and parameters of a version, picked from GET /api/models; "New version"
 * starting from a version, with the diff before saving; variables detected from the template
 * scaffolding the schema (as a form or as JSON) and a preview with sample values; the versions list
 * with content, date and labels; releases (publishing, moving a protected label) that show what
 * changes and ask first, and label history. Every screen is checked with axe and photographed.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, openConsole, signUp } from "./support/console-browser.js";

let b: ConsoleBrowser;
let page: Page;

beforeAll(async () => {
  b = await openConsole();
  page = b.page;
}, 60_000);

afterAll(async () => {
  await b?.close();
});

/** The text of every cell of the versions table's row for `version`. */
const versionRow = (version: number) =>
  page
    .getByRole("region", { name: "Versions table" })
    .getByRole("row")
    .filter({ has: page.getByRole("cell", { name: String(version), exact: true }) });

describe("prompt editing in the console", () => {
  it("writes, reviews, releases and compares prompt versions", async () => {
    await signUp(page, b.base, "Tide Tables");
    // A tool of the organization, to attach.
    await page.getByRole("link", { name: "Tools" }).click();
    await page.getByLabel("Tool key").fill("tides");
    await page.getByLabel("Tool name").fill("Tides");
    await page.getByRole("button", { name: "Create tool" }).click();
    await page.getByText("(manual_stub, version 1)").waitFor();
    await page.getByRole("link", { name: "Prompts" }).click();
    await page.getByLabel("Name").fill("Explainer");
    await page.getByRole("button", { name: "Create prompt" }).click();
    await page.getByRole("heading", { name: "Explainer" }).waitFor();

    // Variables come from the template: a group each, a required text one scaffolded.
    await page.getByLabel("System prompt").fill("Explain {{topic}} to a {{audience}} reader.");
    const topic = page.getByRole("group", { name: "topic", exact: true });
    const audience = page.getByRole("group", { name: "audience", exact: true });
    await topic.waitFor();
    expect(await topic.getByLabel("Required").isChecked()).toBe(true);
    await audience.getByLabel("Required").uncheck();
    await topic.getByLabel("Description").fill("What to explain");
    // The preview renders with the sample values; one without a value shows its placeholder.
    await topic.getByLabel("Sample value").fill("tides");
    const preview = page.getByRole("note", { name: "Prompt preview" });
    expect(await preview.textContent()).toBe("Explain tides to a {{audience}} reader.");
    expect(await preview.locator("mark").allTextContents()).toEqual(["tides", "{{audience}}"]);
    // As JSON: the same schema, the required text variable refusing an empty value.
    await page.getByLabel("as JSON").check();
    const schema = JSON.parse(await page.getByLabel("Variables schema (JSON Schema)").inputValue());
    expect(schema).toEqual({
      type: "object",
      properties: {
        topic: { type: "string", description: "What to explain", minLength: 1 },
        audience: { type: "string" },
      },
      required: ["topic"],
    });
    await page.getByLabel("as a form").check();
    await topic.waitFor();

    // Model and parameters: the models of GET /api/models, the unavailable ones told apart.
    const model = page.getByLabel("Model", { exact: true });
    const available = model.locator('optgroup[label="Available"] option');
    await available.filter({ hasText: "local/echo · free" }).waitFor({ state: "attached" });
    expect(await available.allTextContents()).toContain("local/echo · free");
    const unavailable = model.locator('optgroup[label^="Not available"] option');
    expect(await unavailable.count()).toBeGreaterThan(0);
    expect(await unavailable.first().isDisabled()).toBe(true);
    expect(await unavailable.first().textContent()).toMatch(/ · unavailable$/);
    await model.selectOption("local/echo");
    await page.getByText(/^Available · tools and JSON schema answers · free/).waitFor();
    await page.getByLabel("Temperature").fill("0.3");
    await page.getByLabel("Output token limit").fill("200");
    // The response cache's default for the version's runs (docs/cache.md "Defaults").
    await page.getByLabel("Cache answers for (seconds)").fill("300");
    await page.getByLabel("tides").check();
    await b.screen("prompt-editor");

    // Reviewed before it is saved: version 1 is all new.
    await page.getByRole("button", { name: "Review changes" }).click();
    const review = page.getByRole("region", { name: "Changes in the new version" });
    await review.getByRole("cell", { name: "Model", exact: true }).waitFor();
    expect(await review.getByRole("cell", { name: "Temperature", exact: true }).count()).toBe(1);
    expect(await review.getByRole("cell", { name: "Cache answers for (seconds)", exact: true }).count()).toBe(1);
    await page.getByRole("button", { name: "Create version 1" }).click();
    await page.getByText("Version 1 created as a draft.").waitFor();
    // The versions list shows what the version holds, when it was made and its labels.
    const row1 = versionRow(1);
    await row1.getByText("Explain {{topic}} to a {{audience}} reader.").waitFor();
    expect(await row1.textContent()).toContain("local/echo · tools: tides");
    expect(await row1.textContent()).toMatch(/\d{1,2} \w{3} \d{4}, \d{2}:\d{2}/);
    expect(await row1.getByText("latest", { exact: true }).count()).toBe(1);

    // "New version" starts from the latest: the same content, model and parameters.
    expect(await page.getByLabel("System prompt").inputValue()).toBe("Explain {{topic}} to a {{audience}} reader.");
    expect(await model.inputValue()).toBe("local/echo");
    expect(await page.getByLabel("Temperature").inputValue()).toBe("0.3");
    expect(await page.getByLabel("Cache answers for (seconds)").inputValue()).toBe("300");
    // The sample values typed for version 1 are still there for the next one.
    expect(await topic.getByLabel("Sample value").inputValue()).toBe("tides");
    expect(await preview.textContent()).toBe("Explain tides to a {{audience}} reader.");
    await page.getByLabel("System prompt").fill("Explain {{topic}} to a {{audience}} reader, in three sentences.");
    await page.getByLabel("Temperature").fill("0.7");
    // Unsaved edits survive a visit to another page, said so, and can be discarded.
    await page.getByRole("link", { name: "Runs" }).click();
    await page.getByRole("heading", { level: 1, name: "Runs" }).waitFor();
    await page.goBack();
    await page.getByRole("heading", { name: "Explainer" }).waitFor();
    await page.getByText("Your unsaved edits from before are back.").waitFor();
    expect(await page.getByLabel("System prompt").inputValue()).toBe(
      "Explain {{topic}} to a {{audience}} reader, in three sentences.",
    );
    expect(await page.getByLabel("Temperature").inputValue()).toBe("0.7");
    await page.getByRole("button", { name: "Discard them" }).click();
    expect(await page.getByLabel("System prompt").inputValue()).toBe("Explain {{topic}} to a {{audience}} reader.");
    expect(await page.getByText("Your unsaved edits from before are back.").count()).toBe(0);
    await page.getByLabel("System prompt").fill("Explain {{topic}} to a {{audience}} reader, in three sentences.");
    await page.getByLabel("Temperature").fill("0.7");
    await page.getByRole("button", { name: "Review changes" }).click();
    await page.getByRole("heading", { name: "Changes against version 1" }).waitFor();
    const changed = review.getByRole("row");
    expect(await changed.count()).toBe(3); // the header, the system prompt, the temperature
    expect(await review.getByRole("cell", { name: "System prompt", exact: true }).count()).toBe(1);
    expect(await review.textContent()).toContain("in three sentences.");
    // Word by word: the system prompt's row marks the words added, and keeps the rest plain.
    const systemRow = changed.filter({ has: page.getByRole("cell", { name: "System prompt", exact: true }) });
    await systemRow.locator("ins").first().waitFor();
    expect((await systemRow.locator("ins").allTextContents()).join("")).toContain("in three sentences");
    expect(await systemRow.locator("del").count()).toBe(0);
    expect(await systemRow.locator("td").nth(3).textContent()).toBe(
      "Explain {{topic}} to a {{audience}} reader, in three sentences.",
    );
    await page.getByLabel("Change message (optional)").fill("Three sentences, warmer.");
    await b.screen("prompt-review");
    await page.getByRole("button", { name: "Create version 2" }).click();
    await page.getByText("Version 2 created as a draft.").waitFor();
    // The list shows each version's change message and its author (the one signed in: "you").
    await versionRow(2).getByText("Three sentences, warmer.").waitFor();
    await versionRow(2).getByText("by you").waitFor();
    expect(await versionRow(1).getByText("by you").count()).toBe(1);
    // Or from any version picked.
    await page.getByLabel("Start from").selectOption({ label: "Version 1" });
    await expect
      .poll(() => page.getByLabel("System prompt").inputValue())
      .toBe("Explain {{topic}} to a {{audience}} reader.");

    // Publishing shows what goes live and asks; cancelled, nothing changes.
    await page.getByRole("button", { name: "Publish version 1" }).click();
    const dialog = page.getByRole("dialog", { name: "Publish version 1?" });
    await dialog.getByText(/Version 1 goes live.*Nothing is live yet\./).waitFor();
    await dialog.getByRole("cell", { name: "System prompt", exact: true }).waitFor();
    // Cancel has the focus (Enter never releases by accident), and gives it back to the button that asked.
    expect(
      await dialog.getByRole("button", { name: "Cancel" }).evaluate((b) => b === b.ownerDocument.activeElement),
    ).toBe(true);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(
      await page
        .getByRole("button", { name: "Publish version 1" })
        .evaluate((b) => b === b.ownerDocument.activeElement),
    ).toBe(true);
    expect(await page.getByText("published (live)").count()).toBe(0);
    await page.getByRole("button", { name: "Publish version 1" }).click();
    await dialog.getByRole("button", { name: "Go live with version 1" }).click();
    await page.getByText("Version 1 is live.").waitFor();
    // No stale message: the draft's is gone.
    expect(await page.getByText(/created as a draft/).count()).toBe(0);
    await versionRow(1).getByText("published (live)").waitFor();

    // Moving production (protected) to version 2: the diff, that it goes live, and a confirmation.
    await page.getByLabel("Label", { exact: true }).fill("production");
    await page.getByLabel("Version", { exact: true }).selectOption({ label: "Version 2" });
    await page.getByRole("button", { name: "Move label" }).click();
    const move = page.getByRole("dialog", { name: "Publish version 2?" });
    await move.getByText(/Version 2 goes live.*Live now: version 1\./).waitFor();
    await move.getByRole("cell", { name: "Temperature", exact: true }).waitFor();
    expect(await move.getByRole("row").count()).toBe(3);
    await b.screen("prompt-release");
    await move.getByRole("button", { name: "Move production to version 2" }).click();
    await page.getByText("Version 2 is live.").waitFor();
    await page.getByText("production → version 2").waitFor();
    await versionRow(2).getByText("published (live)").waitFor();
    // An unprotected label moves at once.
    await page.getByLabel("Label", { exact: true }).fill("staging");
    await page.getByLabel("Version", { exact: true }).selectOption({ label: "Version 1" });
    await page.getByRole("button", { name: "Move label" }).click();
    await page.getByText("staging now points at version 1.").waitFor();
    expect(await page.getByRole("dialog").count()).toBe(0);
    expect(await page.getByText("Version 2 is live.").count()).toBe(0);
    // Label history: where production has been, newest first.
    await page.getByRole("button", { name: "History of production" }).click();
    const history = page.getByRole("list", { name: "History of production" }).getByRole("listitem");
    await history.first().waitFor();
    expect(await history.allTextContents()).toEqual([
      expect.stringMatching(/^published version 2 · /),
      expect.stringMatching(/^published version 1 · /),
    ]);
    expect(await versionRow(1).getByText("staging", { exact: true }).count()).toBe(1);

    // The comparison shows each version's model.
    await page.getByLabel("From", { exact: true }).selectOption({ label: "Version 1" });
    await page.getByLabel("To", { exact: true }).selectOption({ label: "Version 2" });
    await page.getByRole("button", { name: "Compare" }).click();
    const modelRow = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "Model", exact: true }) });
    await modelRow.getByRole("cell").nth(1).waitFor();
    expect(await modelRow.getByRole("cell").allTextContents()).toEqual(["local/echo", "local/echo"]);
    await b.screen("prompt-detail-releases");

    // A run refuses an empty required text variable, and runs with a value.
    await page.getByRole("link", { name: "Playground", exact: true }).click();
    await page.getByLabel("Prompt or skill").selectOption({ label: "Explainer" });
    await page.getByLabel("topic (required)").fill("");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("article").count()).toBe(0);
    await page.getByLabel("topic (required)").fill("tides");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page
      .getByRole("article")
      .filter({ hasText: /Explain tides to a +reader, in three sentences\./ })
      .waitFor();

    // A version row opens that version in the playground.
    await page.getByRole("link", { name: "Prompts", exact: true }).click();
    await page.getByRole("link", { name: "Explainer" }).click();
    await page.getByRole("link", { name: "Try version 1 in the playground" }).click();
    await page.getByRole("heading", { name: "Playground" }).waitFor();
    expect(await page.getByLabel("Prompt or skill").locator("option:checked").textContent()).toBe("Explainer");
    await expect
      .poll(() => page.getByLabel("Version", { exact: true }).locator("option:checked").textContent())
      .toMatch(/^Version 1\b/);
  }, 120_000);
});
