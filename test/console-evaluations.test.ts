/**
 * The console's evaluations (issue #35) in Debian's chromium, through the UI: cases added and
 * edited through a form (input fields from the skill's input schema, assertions as rows), imported
 * from CSV and JSONL files, exported as JSONL and CSV, deleted; a run's report (polled until done)
 * with totals and latency percentiles per target, outputs, verdicts, reasons, attempts, links to
 * the skill runs and the judge runs; the skill's past runs newest first, paged with the SDK; and
 * two runs compared (changed verdicts, output diffs). The prompt, the skill and the bulk of the
 * runs are made with the SDK; each screen is checked with axe at 1366 px and 390 px.
 */
import { readFileSync } from "node:fs";
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

async function downloaded(button: string): Promise<{ name: string; text: string }> {
  const [file] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: button }).click()]);
  return { name: file.suggestedFilename(), text: readFileSync((await file.path()) ?? "", "utf8") };
}

const caseRow = (name: string) =>
  page
    .getByRole("region", { name: "Cases", exact: true })
    .getByRole("row")
    .filter({ has: page.getByRole("cell", { name, exact: true }) });

describe("evaluations in the console", () => {
  it("edits cases, runs, reports, lists and compares evaluation runs", async () => {
    await signUp(page, b.base, "Greeters");
    const { sdk, organizationId } = await consoleSdk(page, b.base);
    const variablesSchema = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
    const greeter = await sdk.prompts.create({ organizationId, name: "Greeter" });
    const v1 = await sdk.prompts.createVersion(greeter.id, { systemPrompt: "Greet {{name}} warmly.", variablesSchema });
    await sdk.prompts.publish(greeter.id, { versionId: v1.id });
    const skill = await sdk.skills.create({ organizationId, name: "Greeting skill" });
    await sdk.skills.replacePrompts(skill.draftVersionId as string, { prompts: [{ promptId: greeter.id }] });
    await sdk.skills.publish(skill.id);
    await sdk.skills.createVersion(skill.id);

    await page.goto(`${b.base}/skills/${skill.id}`);
    await page.getByRole("heading", { name: "Evaluations" }).waitFor();
    await page.getByText("No case yet: add one below or import a file.").waitFor();
    // A case through the form: the input as the schema's fields, two assertions as rows.
    await page.getByLabel("Case name").fill("Ada");
    await page.getByLabel("name (required)").fill("Ada");
    await page.getByRole("button", { name: "Add an assertion" }).click();
    await page.getByLabel("Text the output contains").fill("Ada");
    await page.getByRole("button", { name: "Add an assertion" }).click();
    await page.getByLabel("Assertion 2 type").selectOption("llm_judge");
    await page.getByLabel("Rubric: what a passing output does").fill("greets the person by name");
    await page.getByLabel("Passing score (0 to 1, default 0.5) (optional)").fill("0");
    await page.getByRole("button", { name: "Add case" }).click();
    await page.getByText("Added Ada.").waitFor();
    expect(await caseRow("Ada").textContent()).toContain("contains, llm judge");
    // A required input left empty is refused before anything is sent.
    await page.getByRole("button", { name: "Add case" }).click();
    await page.getByRole("alert").getByText("Fill in the required variables.").waitFor();
    // Two from a CSV file, one from JSONL.
    await page.getByLabel("Import cases (JSON, JSONL or CSV)").setInputFiles({
      name: "cases.csv",
      mimeType: "text/csv",
      buffer: Buffer.from("name,input.name,contains\nGrace,Grace,Greet Grace\nAlan,Alan,Greet Alan\n"),
    });
    await page.getByText("Imported 2 cases from cases.csv.").waitFor();
    await page.getByLabel("Import cases (JSON, JSONL or CSV)").setInputFiles({
      name: "more.jsonl",
      mimeType: "application/x-ndjson",
      buffer: Buffer.from('{"name":"Scratch","input":{"name":"Nobody"},"expectedOutput":"Greet Nobody warmly."}\n'),
    });
    await page.getByText("Imported 1 case from more.jsonl.").waitFor();
    await caseRow("Scratch").waitFor();
    // A file that is not cases changes nothing and says which line is wrong.
    await page.getByLabel("Import cases (JSON, JSONL or CSV)").setInputFiles({
      name: "bad.jsonl",
      mimeType: "application/x-ndjson",
      buffer: Buffer.from('{"name":"ok","input":{}}\n{"name": oops}\n'),
    });
    await page.getByRole("alert").getByText("bad.jsonl: line 2 is not JSON").waitFor();
    // One edited, one deleted after a confirmation.
    await page.getByRole("button", { name: "Edit Alan" }).click();
    await page.getByRole("heading", { name: "Edit the case Alan" }).waitFor();
    expect(await page.getByLabel("name (required)").inputValue()).toBe("Alan");
    await page.getByLabel("Case name").fill("Alan Turing");
    await page.getByRole("button", { name: "Save case" }).click();
    await caseRow("Alan Turing").waitFor();
    await page.getByRole("button", { name: "Delete Scratch" }).click();
    await page.getByRole("button", { name: "Confirm: delete Scratch" }).click();
    await page.getByText("Deleted Scratch.").waitFor();
    // The note shows as soon as the delete is answered; the list is read again after it.
    await expect.poll(() => caseRow("Scratch").count()).toBe(0);
    // Exported as files: JSONL keeps every assertion, CSV the input fields and the contains.
    const jsonl = await downloaded("Export JSONL");
    expect(jsonl.name).toBe(`cases-${skill.id}.jsonl`);
    const lines = jsonl.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.name)).toEqual(["Ada", "Grace", "Alan Turing"]);
    expect(lines[0].assertions).toEqual([
      { type: "contains", value: "Ada" },
      { type: "llm_judge", rubric: "greets the person by name", threshold: 0 },
    ]);
    const csv = await downloaded("Export CSV");
    expect(csv.text.split(/\r?\n/).slice(0, 2)).toEqual(["name,input.name,expectedOutput,contains", "Ada,Ada,,Ada"]);
    await b.screen("evaluation-cases");

    // 20 runs of one case through the SDK, so that the list has more than a page.
    const [ada] = (await sdk.evaluations.listCases(skill.id, { limit: 200 })).data.filter((c) => c.name === "Ada");
    for (let i = 0; i < 20; i++) {
      const r = await sdk.evaluations.run(skill.id, {
        organizationId,
        targets: ["published"],
        caseIds: [ada?.id ?? ""],
      });
      await sdk.evaluations.waitForResult(skill.id, r.evaluationRunId, { timeoutMs: 30_000 });
    }
    // A run of draft and published from the console: its report opens and follows it to the end.
    await page.getByLabel("against draft").check();
    await page.getByLabel("against published").check();
    await page.getByRole("button", { name: "Run evaluation" }).click();
    await page.getByRole("heading", { name: "Evaluation report" }).waitFor();
    await page.getByText(/^Evaluation completed: 3 cases: draft 3\/3 passed/).waitFor({ timeout: 30_000 });
    const first = page.url();

    // The draft changes: the prompt's second version greets differently; two attempts per case.
    const v2 = await sdk.prompts.createVersion(greeter.id, {
      systemPrompt: "Welcome {{name}} warmly.",
      variablesSchema,
    });
    await sdk.prompts.publish(greeter.id, { versionId: v2.id });
    const latest = await sdk.skills.get(skill.id);
    await sdk.skills.replacePrompts(latest.draftVersionId as string, { prompts: [{ promptId: greeter.id }] });
    await page.getByRole("link", { name: "Greeting skill" }).click();
    await page.getByRole("heading", { name: "Greeting skill" }).waitFor();
    await page.getByLabel("against draft").check();
    await page.getByLabel("against published").check();
    await page.getByLabel("Attempts per case (1–20)").fill("2");
    await page.getByRole("button", { name: "Run evaluation" }).click();
    await page.getByText(/^Evaluation completed: 3 cases × 2 attempts/).waitFor({ timeout: 30_000 });
    expect(page.url()).not.toBe(first);
    // Totals per target with latency percentiles; the judge's runs counted.
    const totals = page.getByRole("region", { name: "Totals per target" });
    await totals.getByRole("row").nth(2).waitFor();
    const draftTotals = await totals.getByRole("row").filter({ hasText: "draft" }).textContent();
    expect(draftTotals).toMatch(/^draft120033%/);
    expect(draftTotals).toMatch(/\d+ ms \/ \d+ ms \/ \d+ ms/);
    expect(draftTotals).toContain("2 runs · $0");
    expect(await totals.getByRole("row").filter({ hasText: "published" }).textContent()).toMatch(/^published3000100%/);
    // A case: its input, each target's output, verdict and reasons; attempts with their runs.
    const grace = page.getByRole("article", { name: "Case Grace" });
    expect(await grace.textContent()).toContain('{"name":"Grace"}');
    expect(await grace.textContent()).toContain("regressed");
    expect(await grace.locator(".eval-target").first().textContent()).toMatch(
      /^draft: failed 0\/2 attempts passed.*Welcome Grace warmly\.fail contains: the output does not contain Greet Grace/,
    );
    await page.getByRole("radio", { name: /failing or flaky \(2\)/ }).check();
    expect(await page.getByRole("article").count()).toBe(2);
    await page.getByRole("radio", { name: /every case \(3\)/ }).check();
    const adaCase = page.getByRole("article", { name: "Case Ada" });
    await adaCase.getByText("2 attempts, 2 judge runs").first().click();
    await adaCase.getByRole("link", { name: "judge run 1" }).first().click();
    await page.getByRole("heading", { name: /^judge run jrun_/ }).waitFor();
    await page.goBack();
    await page.getByRole("heading", { name: "Evaluation report" }).waitFor();
    await b.screen("evaluation-report");
    await page.getByRole("article", { name: "Case Alan Turing" }).getByText("2 attempts").last().click();
    await page.getByRole("link", { name: "published run, attempt 2" }).click();
    await page.getByRole("heading", { name: /^skill run srun_/ }).waitFor();
    await page.goBack();

    // The skill's runs, newest first, a page of 20 then the rest.
    await page.getByRole("link", { name: "Greeting skill" }).click();
    const history = page.getByRole("region", { name: "Evaluation runs" });
    await page.getByText("20 runs shown, newest first.").waitFor();
    expect(await history.getByRole("row").nth(1).textContent()).toMatch(/completeddraft, published2/);
    await page.getByRole("button", { name: "Load 20 more" }).click();
    await page.getByText("22 runs shown: that is all of them.").waitFor();
    expect(await history.getByRole("row").nth(22).textContent()).toMatch(/completedpublished1published 100%/);
    await b.screen("evaluation-history");

    // The newest two compared (on the draft, which both ran): verdicts that changed, output diffs.
    await page.getByRole("button", { name: "Compare the two runs" }).click();
    await page.getByRole("heading", { name: "Compare evaluation runs" }).waitFor();
    await page.getByText(/^3 cases compared on draft: 0 fixed, 2 regressed/).waitFor();
    const compared = page.getByRole("region", { name: "Compared cases" });
    const graceRow = compared.getByRole("row").filter({ hasText: "Grace" });
    expect(await graceRow.textContent()).toMatch(
      /^Gracepassed 1\/1 attempt passedfailed 0\/2 attempts passedregressed verdict changed/,
    );
    expect(await graceRow.locator("del").textContent()).toBe("Greet");
    expect(await graceRow.locator("ins").textContent()).toBe("Welcome");
    await b.screen("evaluation-compare");

    // A long run: its report says it is running while the results come in, and cancels it.
    await sdk.evaluations.createCases(skill.id, {
      organizationId,
      cases: Array.from({ length: 50 }, (_, i) => ({ name: `bulk ${i}`, input: { name: `N${i}` } })),
    });
    await page.getByRole("link", { name: "Greeting skill" }).click();
    await page.getByText("53 cases.").waitFor();
    await page.getByLabel("against published").check();
    await page.getByLabel("Attempts per case (1–20)").fill("20");
    await page.getByRole("button", { name: "Run evaluation" }).click();
    await page.getByText(/^Evaluation (queued|running) \(\d+ of the cases reported so far\)…$/).waitFor();
    await page.getByRole("button", { name: "Cancel the run" }).click();
    await page.getByText(/^Evaluation cancelled: Cancelled: /).waitFor({ timeout: 30_000 });
    expect(await page.getByRole("button", { name: "Cancel the run" }).count()).toBe(0);
  }, 240_000);
});
