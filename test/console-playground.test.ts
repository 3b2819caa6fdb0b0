/**
 * The playground's streaming and the run page's provenance (issue #35) in Debian's chromium: a
 * prompt's answer shows as the provider streams it (text on screen while the stub is still
 * sending), the final card has tokens, cost and the stored run; Stop cancels a run, which is kept
 * as stored (failed, `cancelled`, the text so far); a skill says it answers whole; an evaluation's
 * case run and judge run link to the evaluation report. The model is an OpenAI-protocol stub that
 * streams slowly and grades as a judge. Each screen is checked with axe at 1366 px and 390 px.
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import type { Kiln } from "@kiln/sdk";
import { type OpenAIStub, type ReceivedRequest, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";

const WORDS = "one two three four five six seven eight nine ten eleven twelve";

/** The judge grades 0.9; every other call counts, a word every 150 ms when streamed. */
function answer(request: ReceivedRequest) {
  const messages: { role?: string; content?: unknown }[] = request.body?.messages ?? [];
  const system = String(messages.find((m) => m.role === "system")?.content ?? "");
  if (system.startsWith("You grade the output")) return stubReply.text(JSON.stringify({ score: 0.9, reason: "fine" }));
  return stubReply.text(WORDS, { usage: { prompt_tokens: 20, completion_tokens: 12 }, chunkDelayMs: 150 });
}

let stub: OpenAIStub;
let ui: ConsoleBrowser;
let sdk: Kiln;
let organizationId: string;

beforeAll(async () => {
  stub = await startOpenAIStub({ respond: answer });
  const providers = JSON.stringify([
    {
      id: "stub",
      baseUrl: stub.baseUrl,
      models: [{ model: "m", inputPerMTokUsd: 1.5, outputPerMTokUsd: 6, jsonSchema: true }],
    },
  ]);
  ui = await openConsole({ providers: loadProvidersConfig({ OPENAI_COMPATIBLE_PROVIDERS: providers }) });
  await signUp(ui.page, ui.base, "Streams");
  ({ sdk, organizationId } = await consoleSdk(ui.page, ui.base));
  const variablesSchema = { type: "object", properties: { person: { type: "string" } }, required: ["person"] };
  const counter = await sdk.prompts.create({ organizationId, name: "Counter" });
  const v = await sdk.prompts.createVersion(counter.id, {
    systemPrompt: "Count to twelve for {{person}}.",
    variablesSchema,
    model: "stub/m",
  });
  await sdk.prompts.publish(counter.id, { versionId: v.id });
}, 120_000);

afterAll(async () => {
  await ui?.close();
  await stub?.close();
});

describe("the playground's streaming and the run page's provenance", () => {
  it("shows the answer as it streams, then the run card with tokens, cost and the stored run", async () => {
    const { page } = ui;
    await page.getByRole("link", { name: "Playground", exact: true }).click();
    await page.getByRole("heading", { name: "Playground" }).waitFor();
    await page.getByLabel("Prompt or skill").selectOption({ label: "Counter" });
    await page.getByLabel("person (required)").fill("Ada");
    const streamsBefore = stub.streams.length;
    await page.getByRole("button", { name: "Run", exact: true }).click();
    const live = page.locator(".run-card.live");
    await live.getByText("one two").waitFor();
    // On screen while the provider is still sending the rest of the answer.
    expect(stub.streams.length).toBe(streamsBefore);
    expect(await live.textContent()).not.toContain("twelve");
    await page.getByRole("button", { name: "Stop" }).waitFor();
    const card = page.getByRole("article").first();
    await card.getByRole("link", { name: "Open the stored run" }).waitFor();
    expect(await card.locator("pre").textContent()).toBe(WORDS);
    expect(await card.textContent()).toMatch(/succeeded · stub\/m · 20 in \/ 12 out tokens · \$0\.0001 ·/);
    expect(await page.locator(".run-card.live").count()).toBe(0);
    await ui.screen("playground-streamed");

    // A visit to another page and back: the pick, the variables and the results are still there.
    const runId = await card.getByRole("link", { name: "Open the stored run" }).getAttribute("href");
    await page.getByRole("link", { name: "Runs" }).click();
    await page.getByRole("heading", { level: 1, name: "Runs" }).waitFor();
    await page.getByRole("link", { name: "Playground", exact: true }).click();
    await page.getByRole("heading", { name: "Playground" }).waitFor();
    await page.getByRole("article").first().getByRole("link", { name: "Open the stored run" }).waitFor();
    expect(
      await page.getByRole("article").first().getByRole("link", { name: "Open the stored run" }).getAttribute("href"),
    ).toBe(runId);
    expect(await page.getByLabel("person (required)").inputValue()).toBe("Ada");
    expect(await page.getByLabel("Prompt or skill").locator("option:checked").textContent()).toContain("Counter");
    // Ctrl+Enter runs from a field: a second card, newest first.
    const cards = await page.getByRole("article").count();
    await page.getByLabel("person (required)").fill("Grace");
    await page.getByLabel("person (required)").press("Control+Enter");
    await expect.poll(() => page.getByRole("article").count(), { timeout: 20_000 }).toBe(cards + 1);
    await page.getByRole("article").first().getByRole("link", { name: "Open the stored run" }).waitFor();

    // A stored run opens in the playground with its version and variables, over what was kept.
    await page.getByLabel("person (required)").fill("someone else");
    await page.getByRole("article").nth(1).getByRole("link", { name: "Open the stored run" }).click();
    await page.getByRole("link", { name: "Open in the playground" }).click();
    await page.getByRole("heading", { name: "Playground" }).waitFor();
    await expect.poll(() => page.getByLabel("person (required)").inputValue()).toBe("Ada");
    expect(await page.getByLabel("Prompt or skill").locator("option:checked").textContent()).toContain("Counter");
    expect(new URL(page.url()).search).toBe("");
  }, 60_000);

  it("stops a run: the card shows the text so far and links the run, stored as cancelled", async () => {
    const { page } = ui;
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.locator(".run-card.live").getByText("one two three").waitFor();
    await page.getByRole("button", { name: "Stop" }).click();
    const card = page.getByRole("article").first();
    await card.getByText("Stopped: the text received until then is kept.").waitFor();
    const kept = (await card.locator("pre").textContent()) ?? "";
    expect(kept.startsWith("one two three")).toBe(true);
    expect(kept.length).toBeLessThan(WORDS.length);
    expect(await card.locator(".badge").textContent()).toBe("failed");
    await ui.screen("playground-stopped");
    await card.getByRole("link", { name: "Open the stored run" }).click();
    await page.getByRole("heading", { name: /^prompt run run_/ }).waitFor();
    expect(await page.locator("code.run-error-code").textContent()).toBe("cancelled");
    await expect.poll(() => stub.streams.at(-1)?.closedEarly).toBe(true);
  }, 60_000);

  it("links an evaluation's case run and judge run to the evaluation report; a skill says it runs whole", async () => {
    const { page } = ui;
    const prompt = (await sdk.prompts.list({ organizationId })).data.find((p) => p.name === "Counter");
    const skill = await sdk.skills.create({ organizationId, name: "Counting skill" });
    await sdk.skills.replacePrompts(skill.draftVersionId ?? "", { prompts: [{ promptId: prompt?.id ?? "" }] });
    await sdk.skills.publish(skill.id);
    await sdk.evaluations.createCases(skill.id, {
      organizationId,
      cases: [
        {
          name: "Ada",
          input: { person: "Ada" },
          assertions: [{ type: "llm_judge", rubric: "counts to twelve", model: "stub/m" }],
        },
      ],
    });
    const started = await sdk.evaluations.run(skill.id, { organizationId, targets: ["published"] });
    const result = await sdk.evaluations.waitForResult(skill.id, started.evaluationRunId, { timeoutMs: 30_000 });
    const outcome = result.results[0]?.byTarget.published;
    const caseRun = outcome?.runId ?? "";
    const judgeRun = outcome?.attempts[0]?.judgeRuns[0]?.runId ?? "";
    expect(caseRun).toMatch(/^srun_/);
    expect(judgeRun).toMatch(/^jrun_/);

    const link = `evaluation run ${started.evaluationRunId}`;
    await page.goto(`${ui.base}/runs/${caseRun}`);
    await page.getByRole("heading", { name: `skill run ${caseRun}` }).waitFor();
    expect(await page.locator("dl.summary").textContent()).toContain("Case of");
    await page.getByRole("link", { name: link }).waitFor();
    await ui.screen("run-evaluation-case");
    await page.goto(`${ui.base}/runs/${judgeRun}`);
    await page.getByRole("heading", { name: `judge run ${judgeRun}` }).waitFor();
    expect(await page.locator("dl.summary").textContent()).toContain("Judged for");
    await page.getByRole("link", { name: link }).click();
    await page.waitForURL(`${ui.base}/skills/${skill.id}/evaluations/${started.evaluationRunId}`);
    await page.getByRole("heading", { name: "Evaluation report" }).waitFor();
    await page.getByRole("heading", { name: "Cases" }).waitFor();

    // The playground runs the skill whole, and says so.
    await page.getByRole("link", { name: "Playground", exact: true }).click();
    await page.getByLabel("Prompt or skill").selectOption({ label: "Counting skill" });
    await page.getByText("A skill's answer shows once all its steps have run: skills do not stream.").waitFor();
    await page.getByLabel("person (required)").fill("Grace");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.getByRole("article").first().getByRole("link", { name: "Open the stored run" }).waitFor();
    expect(await page.getByRole("article").first().locator("pre").textContent()).toBe(WORDS);
    expect(await page.getByRole("button", { name: "Stop" }).count()).toBe(0);
  }, 90_000);
});
