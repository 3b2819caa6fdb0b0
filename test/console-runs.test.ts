/**
 * The console's runs and playground (issue #35) in Debian's chromium, through the UI: the runs
 * list newest first, paged to its end through the SDK's pagination, filtered, failures marked,
 * each row named by what ran; a run's page with its inputs, rendered messages and output; the
 * playground with a label, a model from /api/models, a variables form, a link to the stored run
 * and two versions side by side. The prompt and the runs listed are made with the SDK (the
 * prompt editor is console.test.ts's); each screen is checked with axe at 1366 px and 390 px and
 * photographed into test-artifacts/console/.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadProvidersConfig } from "@kiln/execution/config";
import type { Kiln } from "@kiln/sdk";
import OpenAI from "openai";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "./bench/load.js";
import { consoleSdk } from "./support/console-browser.js";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";

const ARTIFACTS = join(ROOT, "test-artifacts/console");
const AXE = readFileSync(join(ROOT, "node_modules/axe-core/axe.min.js"), "utf8");
/** A compatible provider nobody listens for: its runs fail after validation, stored as failed. */
const DOWN = JSON.stringify([
  { id: "down", baseUrl: "http://127.0.0.1:9", models: [{ model: "m", inputPerMTokUsd: 0.15, outputPerMTokUsd: 0.6 }] },
]);

let kiln: EmbeddedKiln;
let base: string;
let browser: Browser;
let page: Page;

async function screen(name: string) {
  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: 900 });
    const result = (await page.evaluate("axe.run(document)")) as {
      violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
    };
    const serious = result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
    expect(serious, `${name} at ${width}px`).toEqual([]);
    const overflow = (await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")) as number;
    expect(overflow, `${name} overflows at ${width}px`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1366, height: 900 });
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  ({ kiln, baseUrl: base } = await startEmbedded({
    consoleDir: join(ROOT, "console/dist"),
    providers: loadProvidersConfig({ OPENAI_COMPATIBLE_PROVIDERS: DOWN }),
  }));
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
  page = await browser.newPage();
  await page.addInitScript({ content: AXE });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await kiln?.close();
});

/** Signs up and creates a workspace through the UI; answers an SDK client with the console's session. */
async function signUp(): Promise<{ sdk: Kiln; organizationId: string }> {
  await page.goto(`${base}/signup`);
  // No name at sign-up: onboarding asks for it (once; console.test.ts signs up with one and is not asked).
  await page.getByLabel("Email").fill(`runs-${Date.now()}@example.test`);
  await page.getByLabel("Password").fill("correct-horse-battery");
  await page.getByRole("button", { name: "Sign up" }).click();
  await page.getByLabel("Your name").fill("Grace Hopper");
  await page.getByLabel("Organization name").fill("Compilers");
  await page.getByRole("button", { name: "Create workspace" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByRole("button", { name: "Playground" }).click();
  await page.getByRole("heading", { name: "Playground" }).waitFor();
  return consoleSdk(page, base);
}

describe("the console's runs and playground", () => {
  it("lists every run newest first, filters, names what ran, marks failures and shows a run", async () => {
    const { sdk, organizationId } = await signUp();
    const variablesSchema = {
      type: "object",
      properties: { topic: { type: "string" }, style: { type: "string", enum: ["short", "long"] } },
      required: ["topic"],
    };
    const prompt = await sdk.prompts.create({ organizationId, name: "Summarizer" });
    const v1 = await sdk.prompts.createVersion(prompt.id, {
      systemPrompt: "Summarize {{topic}} ({{style}}).",
      variablesSchema,
    });
    await sdk.prompts.publish(prompt.id, { versionId: v1.id });
    const v2 = await sdk.prompts.createVersion(prompt.id, {
      systemPrompt: "Explain {{topic}} ({{style}}).",
      variablesSchema,
    });
    await sdk.prompts.labels.set(prompt.id, "staging", v2.id);
    // 56 runs: more than a page of 50; the newest a failure.
    for (let i = 0; i < 55; i++) {
      await sdk.prompts.run(prompt.id, { organizationId, variables: { topic: `topic ${i}`, style: "short" } });
    }
    const failed = await sdk.prompts.run(prompt.id, { organizationId, variables: { topic: "ovens" }, model: "down/m" });
    expect(failed.status).toBe("failed");

    await page.getByRole("link", { name: "Runs" }).click();
    await page.getByRole("heading", { name: "Runs", exact: true }).waitFor();
    await page.getByText("50 runs shown, newest first.").waitFor();
    const first = page.getByRole("row").nth(1);
    // Run without a label: named by its version alone (the labels on the version now are not the run's).
    await first.getByText("Summarizer v1", { exact: true }).waitFor();
    expect(await first.getAttribute("class")).toBe("run-failed");
    expect(await first.getByRole("link").textContent()).toBe(failed.id);
    expect(await first.textContent()).toContain("provider_error");
    await screen("runs-list");
    await page.getByRole("button", { name: "Load 50 more" }).click();
    await page.getByText("56 runs shown: that is all of them.").waitFor();
    expect(await page.getByRole("row").count()).toBe(57);

    // Filtered: the failures, and the model.
    await page.getByLabel("Status").selectOption("failed");
    await page.getByRole("button", { name: "Filter runs" }).click();
    await page.getByText("1 run shown: that is all of them.").waitFor();
    await page.getByLabel("Status").selectOption("");
    await page.getByLabel("Model").selectOption("local/echo");
    await page.getByRole("button", { name: "Filter runs" }).click();
    await page.getByText("50 runs shown, newest first.").waitFor();
    expect(await page.locator("tr.run-failed").count()).toBe(0);
    await page.getByLabel("Model").selectOption("");
    await page.getByRole("button", { name: "Filter runs" }).click();
    await page.getByText("50 runs shown, newest first.").waitFor();

    // The failed run: what ran, its input, the messages sent, the error.
    await page.getByRole("link", { name: failed.id }).click();
    await page.getByRole("heading", { name: `prompt run ${failed.id}` }).waitFor();
    await page.getByRole("link", { name: "Summarizer v1", exact: true }).waitFor();
    await page.locator(".message pre").getByText("Summarize ovens ().").waitFor();
    expect(await page.locator("dl.summary").textContent()).toContain("down/m");
    await screen("run-failed");
  }, 120_000);

  it("runs a label with a model from a picker, links the run, and compares two versions side by side", async () => {
    await page.getByRole("link", { name: "Playground", exact: true }).click();
    await page.getByRole("heading", { name: "Playground" }).waitFor();
    await page.getByLabel("Prompt or skill").selectOption({ label: "Summarizer" });
    await page.getByLabel("Version", { exact: true }).selectOption({ label: "Label staging (version 2)" });
    const modelOptions = page.getByLabel("Model", { exact: true }).locator("option");
    await modelOptions.filter({ hasText: "down/m (" }).waitFor({ state: "attached" });
    const models = await modelOptions.allTextContents();
    expect(models).toContain("down/m ($0.15 in / $0.60 out per 1M tokens)");
    await page.getByLabel("Model", { exact: true }).selectOption("local/echo");
    // A required variable left empty is refused at its field, once.
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.getByText("is required").waitFor();
    expect(await page.getByText("is required").count()).toBe(1);
    await page.getByLabel("topic (required)").fill("kilns");
    await page.getByLabel("style").selectOption("long");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    const card = page.getByRole("article").first();
    // The text streams in before the run is stored: its status line comes with the stored run.
    await card.getByRole("link", { name: "Open the stored run" }).waitFor();
    await card.getByText("Explain kilns (long).").waitFor();
    expect(await card.getByRole("heading").textContent()).toBe("Summarizer · label staging (version 2) · local/echo");
    expect(await card.textContent()).toMatch(/succeeded · local\/echo · \d+ in \/ \d+ out tokens · \$0 ·/);

    await page.getByLabel("Compare side by side with another version or model").check();
    await page.getByLabel("Version B").selectOption({ label: "Version 1 (published)" });
    await page.getByRole("button", { name: "Run both" }).click();
    const pair = page.locator(".side-by-side").first();
    await pair.getByText("Summarize kilns (long).").waitFor();
    await pair.getByText("Explain kilns (long).").waitFor();
    await screen("playground-compare");

    // The card links to the stored run.
    await pair.getByRole("link", { name: "Open the stored run" }).first().click();
    await page.getByRole("heading", { name: /^prompt run run_/ }).waitFor();
    await page.locator(".message pre").getByText("Explain kilns (long).").waitFor();
    await page.getByRole("link", { name: "Summarizer v2 · staging", exact: true }).waitFor();
    // The label the run resolved its version through (the run's own record, not the labels now).
    expect(await page.locator("dt:has-text('Ran through label') + dd").textContent()).toBe("staging");
    // Labels moved since are not the run's: production onto version 2 changes nothing on its page.
    const { sdk, organizationId } = await consoleSdk(page, base);
    const summarizer = (await sdk.prompts.list({ organizationId })).data.find((p) => p.name === "Summarizer");
    const v2 = (await sdk.prompts.get(summarizer?.id ?? "")).versions.find((v) => v.version === 2);
    await sdk.prompts.labels.set(summarizer?.id ?? "", "production", v2?.id ?? "");
    await page.reload();
    await page.getByRole("link", { name: "Summarizer v2 · staging", exact: true }).waitFor();
    expect(await page.getByRole("link", { name: /production/ }).count()).toBe(0);
    await screen("run");
  }, 120_000);

  it("names a model run (a model called on /v1 without a prompt) by its model and shows the messages it sent", async () => {
    const { organizationId } = await consoleSdk(page, base);
    const session = (await page.context().cookies(`${base}/api`)).find((c) => c.name === "kiln_session");
    const openai = new OpenAI({
      apiKey: session?.value ?? "",
      organization: organizationId,
      baseURL: `${base}/v1`,
      maxRetries: 0,
    });
    const { response } = await openai.chat.completions
      .create({
        model: "local/echo",
        messages: [
          { role: "system", content: "Answer as a compiler would." },
          { role: "user", content: "Where is my semicolon?" },
        ],
      })
      .withResponse();
    const runId = response.headers.get("x-kiln-run-id") ?? "";
    expect(runId).toMatch(/^mrun_/);

    await page.getByRole("link", { name: "Runs" }).click();
    await page.getByRole("heading", { name: "Runs", exact: true }).waitFor();
    await page.getByLabel("Kind").selectOption("model");
    await page.getByRole("button", { name: "Filter runs" }).click();
    await page.getByText("1 run shown: that is all of them.").waitFor();
    const row = page.getByRole("row").nth(1);
    await row.getByText("Model local/echo", { exact: true }).waitFor();
    await row.getByRole("link", { name: runId }).click();
    await page.getByRole("heading", { name: `model run ${runId}` }).waitFor();
    await page.getByText("the model local/echo, called without a prompt").waitFor();
    await page.locator(".message pre").getByText("Where is my semicolon?").waitFor();
    await screen("run-model");
  }, 60_000);

  it("links an agent run's steps to their runs, and a step's run back to its agent run", async () => {
    const { sdk, organizationId } = await consoleSdk(page, base);
    const prompt = (await sdk.prompts.list({ organizationId })).data.find((p) => p.name === "Summarizer");
    const agent = await sdk.agents.create({ organizationId, name: "Digest" });
    await sdk.agents.saveWorkflow(agent.draftVersionId as string, {
      inputSchema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
      entry: "sum",
      steps: [{ id: "sum", type: "prompt", ref: { promptId: prompt?.id ?? "" }, input: { topic: "{{inputs.topic}}" } }],
      output: "{{steps.sum.output}}",
    });
    await sdk.agents.publish(agent.id);
    const run = await sdk.agents.run(agent.id, { organizationId, inputs: { topic: "glazes" } });
    expect(run.status).toBe("succeeded");

    await page.getByRole("link", { name: "Runs", exact: true }).click();
    await page.getByLabel("Kind").selectOption("agent");
    // The agent run's record is written as it completes: filtered again until it is listed.
    await expect
      .poll(async () => {
        await page.getByRole("button", { name: "Filter runs" }).click();
        return page.getByRole("link", { name: run.id }).count();
      })
      .toBe(1);
    await page.getByRole("link", { name: run.id }).click();
    await page.getByRole("heading", { name: `agent run ${run.id}` }).waitFor();
    await page.getByRole("link", { name: "Digest v1", exact: true }).waitFor();
    await page.getByRole("link", { name: run.steps[0]?.runId ?? "" }).click();
    await page.getByRole("heading", { name: `prompt run ${run.steps[0]?.runId}` }).waitFor();
    await page.getByRole("link", { name: `agent run ${run.id}` }).click();
    await page.getByRole("heading", { name: `agent run ${run.id}` }).waitFor();
  }, 60_000);
});
