/**
 * The console's import of a promptfoo config with its files (issues #34 and #35) in Debian's
 * chromium: a directory chosen with `webkitdirectory`, a .tar.gz made by tar and a .zip made by zip
 * of promptfoo example configs (test/fixtures/promptfoo), each checked by a dry run whose report
 * gives the warnings per item, then imported; the same counts the CLI reports for those configs
 * (test/promptfoo-examples.test.ts). Screens checked with axe at 1366 px and 390 px.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "./bench/load.js";
import { type ConsoleBrowser, openConsole, signUp } from "./support/console-browser.js";

const EXAMPLES = join(ROOT, "test/fixtures/promptfoo");
let b: ConsoleBrowser;
let page: Page;
let work: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "kiln-console-import-"));
  b = await openConsole();
  page = b.page;
}, 60_000);

afterAll(async () => {
  await b?.close();
  rmSync(work, { recursive: true, force: true });
});

const summary = (text: string) => page.getByRole("status").filter({ hasText: text });
const warningsOf = (place: string) =>
  page
    .getByRole("region", { name: /warnings?: what is left out or changed/ })
    .locator("div")
    .filter({ has: page.locator("dt", { hasText: place }) });

describe("promptfoo import in the console", () => {
  it("imports a config with its files from a directory, a .tar.gz and a .zip, a dry run first", async () => {
    await signUp(page, b.base, "Translators");
    await page.getByRole("link", { name: "Export and import" }).click();
    await page.getByRole("heading", { name: "Export and import" }).waitFor();

    // A directory: the config and the prompts and tests files it refers to.
    await page
      .getByLabel("A directory holding a promptfoo config and its files")
      .setInputFiles(join(EXAMPLES, "csv-file-prompts"));
    await page.getByText("csv-file-prompts/promptfooconfig.yaml from csv-file-prompts/, with 2 files").waitFor();
    await page.getByRole("button", { name: "Check (dry run)" }).click();
    await page.getByRole("heading", { name: "What the import would do" }).waitFor();
    await summary("12 created, 0 updated, 0 skipped, 0 conflicts").waitFor();
    // Warnings per item: the prompt's two Nunjucks expressions under prompts[0], the provider under providers[0].
    expect(await warningsOf("prompts[0]").locator("dd").count()).toBe(2);
    expect(await warningsOf("providers[0]").textContent()).toContain("openai:gpt-3.5-turbo");
    await b.screen("import-directory");
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await page.getByRole("heading", { name: "Imported" }).waitFor();
    await summary("12 created, 0 updated, 0 skipped, 0 conflicts").waitFor();

    // An archive made by tar: tests in YAML and JSONL files, a rubric file, one file missing.
    const tgz = join(work, "rubric-grading.tar.gz");
    execFileSync("tar", ["-czf", tgz, "-C", EXAMPLES, "rubric-grading"]);
    await page.getByLabel("An archive of one (.zip, .tar.gz, .tgz, .tar)").setInputFiles(tgz);
    await page.getByText("rubric-grading/promptfooconfig.yaml from rubric-grading.tar.gz, with 5 files").waitFor();
    // The directory chosen before is cleared: one choice at a time.
    expect(await page.getByLabel("A directory holding a promptfoo config and its files").inputValue()).toBe("");
    await page.getByRole("button", { name: "Check (dry run)" }).click();
    await summary("5 created, 0 updated, 0 skipped, 0 conflicts").waitFor();
    expect(await warningsOf("more-tests.jsonl:2").textContent()).toContain(
      "file://topics/housing.txt was not given with the config",
    );
    expect(await warningsOf("tests.yaml[0]").locator("dd").count()).toBe(3);
    await b.screen("import-archive");

    // The same directory as a .zip (made by zip) reads the same; imported for real, then again: nothing new.
    const zip = join(work, "rubric-grading.zip");
    execFileSync("zip", ["-qr", zip, "rubric-grading"], { cwd: EXAMPLES });
    await page.getByLabel("An archive of one (.zip, .tar.gz, .tgz, .tar)").setInputFiles(zip);
    await page.getByText("rubric-grading/promptfooconfig.yaml from rubric-grading.zip, with 5 files").waitFor();
    await page.getByRole("button", { name: "Check (dry run)" }).click();
    await summary("5 created, 0 updated, 0 skipped, 0 conflicts").waitFor();
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await page.getByRole("heading", { name: "Imported" }).waitFor();
    await summary("5 created, 0 updated, 0 skipped, 0 conflicts").waitFor();
    await page.getByRole("button", { name: "Check (dry run)" }).click();
    await page.getByRole("heading", { name: "What the import would do" }).waitFor();
    expect(
      await page
        .getByRole("status")
        .filter({ hasText: /updated/ })
        .textContent(),
    ).toMatch(/^0 created, \d+ updated, \d+ skipped, 0 conflicts$/);

    // An archive without a config says so; nothing is sent.
    const empty = join(work, "no-config.zip");
    execFileSync("zip", [
      "-qj",
      empty,
      join(EXAMPLES, "rubric-grading/prompts.txt"),
      join(EXAMPLES, "rubric-grading/rubric.txt"),
    ]);
    await page.getByLabel("An archive of one (.zip, .tar.gz, .tgz, .tar)").setInputFiles(empty);
    await page
      .getByRole("alert")
      .getByText(/^No promptfoo config found/)
      .waitFor();
    expect(await page.getByRole("button", { name: "Check (dry run)" }).isDisabled()).toBe(true);
  }, 120_000);
});
