/**
 * Chat prompts in the console (issue #50) in Debian's chromium through the UI only: the messages
 * editor (few-shot user/assistant rows, a placeholder row, reordering and removing rows, a role
 * changed), previews of every message with the sample values, the version created with exactly
 * those messages, the API's 400 shown at the row it names, and the review of the next version
 * naming the message that changed. Every screen is checked with axe and photographed.
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

const row = (n: number) => page.getByRole("group", { name: new RegExp(`^Row ${n}: `) });

describe("chat prompts in the console", () => {
  it("writes a version of messages with few-shot turns and a placeholder, and reviews a change to one", async () => {
    await signUp(page, b.base, "Chat Team");
    await page.getByRole("link", { name: "Prompts" }).click();
    await page.getByLabel("Name").fill("Translator");
    await page.getByRole("button", { name: "Create prompt" }).click();
    await page.getByRole("heading", { name: "Translator" }).waitFor();

    await page.getByLabel("System prompt").fill("You are {{persona}}.");
    const add = page.getByRole("button", { name: "Add message" });
    await add.click();
    await page.getByLabel("Message 2", { exact: true }).fill("Translate cat.");
    await add.click();
    await row(3).getByLabel("Role").selectOption("assistant");
    await page.getByLabel("Message 3", { exact: true }).fill("Katze");
    await page.getByRole("button", { name: "Add placeholder" }).click();
    expect(await row(4).getByLabel("Placeholder name").inputValue()).toBe("history");
    await add.click();
    await page.getByLabel("Message 5", { exact: true }).fill("Translate {{word}}.");
    // A row added by mistake, moved and removed.
    await add.click();
    await page.getByLabel("Message 6", { exact: true }).fill("stray");
    await row(6).getByRole("button", { name: "Move up" }).click();
    expect(await page.getByLabel("Message 5", { exact: true }).inputValue()).toBe("stray");
    await row(5).getByRole("button", { name: "Remove" }).click();
    expect(await page.getByLabel("Message 5", { exact: true }).inputValue()).toBe("Translate {{word}}.");
    expect(await page.getByLabel("Message 6", { exact: true }).count()).toBe(0);

    // Variables come from every message; every message previews with the sample values.
    const word = page.getByRole("group", { name: "word", exact: true });
    await word.waitFor();
    await page.getByRole("group", { name: "persona", exact: true }).waitFor();
    await word.getByLabel("Sample value").fill("dog");
    expect(await page.getByRole("note", { name: "Message 5 preview" }).textContent()).toBe("Translate dog.");
    await page.getByText("(the run's messages: history)").waitFor();
    await page.getByLabel("Model", { exact: true }).selectOption("local/echo");
    await b.screen("prompt-chat-editor");

    // A second placeholder of the same name: the API's 400 is shown at its row.
    await page.getByRole("button", { name: "Add placeholder" }).click();
    await row(6).getByLabel("Placeholder name").fill("history");
    await page.getByRole("button", { name: "Review changes" }).click();
    await page.getByRole("button", { name: "Create version 1" }).click();
    await row(6).getByText('repeats the placeholder "history"').waitFor();
    await row(6).getByRole("button", { name: "Remove" }).click();
    await page.getByRole("button", { name: "Review changes" }).click();
    await page.getByRole("button", { name: "Create version 1" }).click();
    await page.getByText("Version 1 created as a draft.").waitFor();

    const { sdk, organizationId } = await consoleSdk(page, b.base);
    const prompt = (await sdk.prompts.list({ organizationId })).data.find((p) => p.name === "Translator");
    const v1 = (await sdk.prompts.get(prompt?.id ?? "")).version;
    expect(v1?.chat).toBe(true);
    expect(v1?.messages).toEqual([
      { role: "system", content: "You are {{persona}}." },
      { role: "user", content: "Translate cat." },
      { role: "assistant", content: "Katze" },
      { role: "placeholder", name: "history" },
      { role: "user", content: "Translate {{word}}." },
    ]);

    // The next version starts from it, row for row; its review names the message that changed.
    expect(await row(4).getByLabel("Placeholder name").inputValue()).toBe("history");
    await page.getByLabel("Message 3", { exact: true }).fill("Die Katze");
    await page.getByRole("button", { name: "Review changes" }).click();
    const review = page.getByRole("region", { name: "Changes in the new version" });
    await review.getByRole("cell", { name: "Message 3 / content", exact: true }).waitFor();
    expect(await review.getByRole("row").count()).toBe(2); // the header and the one change
    await b.screen("prompt-chat-review");
  }, 120_000);
});
