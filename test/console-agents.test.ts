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

const step = (name: string) => page.getByRole("group", { name });

describe("the console's agent workflow builder", () => {
  it("builds, validates, publishes and runs a two-step agent without JSON or ids", async () => {
    await signUp(page, b.base, "Glaze Works");
    const { sdk, organizationId } = await consoleSdk(page, b.base);
    const prompt = await sdk.prompts.create({ organizationId, name: "Summarizer" });
    const version = await sdk.prompts.createVersion(prompt.id, {
      systemPrompt: "Summarize {{topic}}.",
      variablesSchema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
    });
    await sdk.prompts.publish(prompt.id, { versionId: version.id });
    await sdk.tools.create({
      organizationId,
      toolKey: "file_summary",
      name: "Filing",
      type: "manual_stub",
      config: { result: { filed: true } },
      inputSchema: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] },
    });

    await page.getByRole("link", { name: "Agents" }).click();
    await page.getByLabel("Agent name").fill("Digest agent");
    await page.getByRole("button", { name: "Create agent" }).click();
    await page.getByRole("heading", { name: "Digest agent" }).waitFor();
    await page.getByRole("heading", { name: "Workflow (draft version 1)" }).waitFor();
    await page.getByText("No step yet: add the first one below.").waitFor();

    // The input, then the two steps from the pickers (by name), each input mapped with a form.
    await page.getByLabel("New input name").fill("topic");
    await page.getByRole("button", { name: "Add input" }).click();
    await page.getByRole("group", { name: "topic" }).waitFor();
    const picker = page.getByLabel("Add a step that runs");
    await picker.locator("option", { hasText: "Filing" }).waitFor({ state: "attached" });
    expect(await picker.locator("optgroup").evaluateAll((gs) => gs.map((g) => g.getAttribute("label")))).toEqual([
      "Prompts",
      "Skills",
      "Tools",
    ]);
    await picker.selectOption({ label: "Summarizer" });
    await page.getByRole("button", { name: "Add step" }).click();
    await picker.selectOption({ label: "Filing" });
    await page.getByRole("button", { name: "Add step" }).click();
    await step("Step 1: summarizer").getByLabel("Source of topic").selectOption("input");
    expect(await step("Step 1: summarizer").getByLabel("Workflow input for topic").inputValue()).toBe("topic");
    await step("Step 2: filing").getByLabel("Source of summary").selectOption("step");
    expect(await step("Step 2: filing").getByLabel("Step for summary").inputValue()).toBe("summarizer");
    expect(await page.getByLabel("The agent answers the output of").inputValue()).toBe("filing");
    await page.getByText("The workflow is valid.").waitFor();
    // The graph is drawn from it: two boxes, the entry marked.
    await page.getByRole("img", { name: "Workflow of 2 steps starting at summarizer" }).waitFor();

    // Moved up with the keyboard, the tool step reads a step that has not run yet: the finding is at its field.
    await page.getByRole("button", { name: "Move filing up" }).focus();
    await page.keyboard.press("Enter");
    const moved = step("Step 1: filing");
    await moved.waitFor();
    expect(await page.evaluate("document.activeElement.getAttribute('aria-label')")).toBe("Move filing down");
    const issue = moved.locator("fieldset", { hasText: "summary" }).getByText(/cannot have run before step "filing"/);
    await issue.waitFor();
    expect(await moved.getByLabel("Source of summary").getAttribute("aria-invalid")).toBe("true");
    await page.getByText(/The workflow has errors: 1 error/).waitFor();
    expect(await page.getByText("filing (entry)").count()).toBe(1);
    await page.evaluate("scrollTo(0, 0)");
    await b.screen("agent-builder-issue");
    await page.keyboard.press("Enter");
    await step("Step 2: filing").waitFor();
    await page.getByText("The workflow is valid.").waitFor();
    expect(await issue.count()).toBe(0);

    // The JSON view shows the same workflow; a change there shows in the builder, and back.
    await page.getByRole("tab", { name: "JSON" }).click();
    const json = page.getByLabel("Workflow (JSON)");
    const text = await json.inputValue();
    expect(JSON.parse(text)).toMatchObject({
      entry: "summarizer",
      output: "{{steps.filing.output}}",
      steps: [
        { id: "summarizer", type: "prompt", ref: { promptId: prompt.id }, input: { topic: "{{inputs.topic}}" } },
        { id: "filing", type: "tool", input: { summary: "{{steps.summarizer.output}}" } },
      ],
    });
    await json.fill(`${text} oops`);
    await page.getByText(/is not JSON/).waitFor();
    await page.getByRole("tab", { name: "Builder" }).click();
    await page
      .getByRole("alert")
      .getByText(/The JSON view has an error/)
      .waitFor();
    await page.getByRole("tab", { name: "JSON" }).click();
    expect(await json.inputValue()).toBe(`${text} oops`);
    await json.fill(text.replace('"{{inputs.topic}}"', '"kilns"'));
    await page.getByRole("tab", { name: "Builder" }).click();
    expect(await step("Step 1: summarizer").getByLabel("Source of topic").inputValue()).toBe("literal");
    expect(await step("Step 1: summarizer").getByLabel("Value of topic").inputValue()).toBe("kilns");
    await step("Step 1: summarizer").getByLabel("Source of topic").selectOption("input");
    await page.getByRole("tab", { name: "JSON" }).click();
    expect(JSON.parse(await json.inputValue())).toEqual(JSON.parse(text));
    await page.getByRole("tab", { name: "Builder" }).click();

    // Saved as the draft, then published after a confirmation.
    await page.getByRole("button", { name: "Save draft" }).click();
    await page.getByRole("button", { name: "Draft saved" }).waitFor();
    await page.getByRole("button", { name: "Publish…" }).click();
    await page.getByText(/Publish version 1\? It goes live/).waitFor();
    await page.getByRole("button", { name: "Publish version 1" }).click();
    await page.getByText("A version is published.").waitFor();
    await page.getByRole("heading", { name: "Workflow (version 1, read-only)" }).waitFor();
    // Shown as published: the prompt step pinned to the version that was live.
    expect(await step("Step 1: summarizer").getByLabel("Version").inputValue()).toBe(version.id);
    const published = await sdk.agents.get((await sdk.agents.list({ organizationId })).data[0]?.id ?? "");
    expect(published.workflow).toMatchObject({ steps: [{ ref: { promptVersionId: version.id } }, { id: "filing" }] });

    // Run with the inputs as a form; each step links to its own run.
    await page.getByLabel("topic (required)").fill("glazes");
    await page.getByRole("button", { name: "Run the published version" }).click();
    await page.getByText("1 run this session; the last succeeded").waitFor();
    const steps = page.getByRole("region", { name: "Steps of the last run" });
    await steps.getByRole("cell", { name: "filing", exact: true }).waitFor();
    expect(await steps.getByRole("row").count()).toBe(3);
    expect(await steps.textContent()).toContain('{"filed":true}');
    await page.evaluate("scrollTo(0, 0)");
    await b.screen("agent-run");
    const agentRunId =
      (await page
        .getByRole("heading", { name: /^Last run:/ })
        .getByRole("link")
        .textContent()) ?? "";
    await steps.getByRole("link", { name: /^run_/ }).click();
    await page.getByRole("heading", { name: /^prompt run run_/ }).waitFor();
    await page.locator(".message pre").getByText("Summarize glazes.").waitFor();
    await page.goBack();
    await page.getByRole("heading", { name: "Digest agent" }).waitFor();
    // The stored runs of the agent (the record is written as the run completes: read again until listed).
    const stored = page.getByRole("region", { name: "Latest runs of the agent" });
    await expect
      .poll(async () => {
        if ((await stored.getByRole("link", { name: agentRunId }).count()) === 1) return true;
        await page.reload();
        await page.getByRole("heading", { name: "Latest runs" }).waitFor();
        return false;
      })
      .toBe(true);
    expect(await stored.getByRole("row").nth(1).textContent()).toContain("summarizer → filing");

    // The agent run's page: a step's tool call reads as JSON on lines of its own width, not one
    // character a line squeezed by the table's other columns.
    await stored.getByRole("link", { name: agentRunId }).click();
    await page.getByRole("heading", { name: /^agent run arun_/ }).waitFor();
    const call = page.getByRole("region", { name: "Steps" }).locator(".tool-calls pre").first();
    await call.waitFor();
    const { width, lines } = await call.evaluate((el) => ({
      width: el.getBoundingClientRect().width,
      lines: Math.round(
        el.getBoundingClientRect().height /
          Number.parseFloat(el.ownerDocument.defaultView?.getComputedStyle(el).lineHeight ?? "16"),
      ),
    }));
    expect(width).toBeGreaterThan(160);
    expect(lines, `the call's JSON on ${lines} lines`).toBeLessThan(12);
    await b.screen("agent-run-detail");
    await page.goBack();
    await page.getByRole("heading", { name: "Digest agent" }).waitFor();

    // A new version starts from the latest one.
    await page.getByRole("button", { name: "New version" }).click();
    await page.getByRole("heading", { name: "Workflow (draft version 2)" }).waitFor();
    await step("Step 2: filing").waitFor();
    expect(await step("Step 1: summarizer").getByLabel("Version").inputValue()).toBe(version.id);
    await page.evaluate("scrollTo(0, 0)");
    await b.screen("agent-builder");
    // Changed and saved, the draft's diff against the version before.
    await page.getByLabel("Description of topic").fill("What to summarize");
    // Reloading with unsaved changes asks first; dismissed, the page and its changes stay.
    const asked = new Promise<string>((resolve) =>
      page.once("dialog", (d) => {
        resolve(d.type());
        void d.dismiss();
      }),
    );
    void page.reload().catch(() => undefined);
    expect(await asked).toBe("beforeunload");
    expect(await page.getByLabel("Description of topic").inputValue()).toBe("What to summarize");
    await page.getByRole("button", { name: "Save draft" }).click();
    await page.getByRole("button", { name: "Draft saved" }).waitFor();
    await page.getByRole("button", { name: "Show diff" }).click();
    const diff = page.getByRole("region", { name: "Agent version diff" });
    await diff.getByText(/inputSchema\/properties\/topic\/description$/).waitFor();
    expect(await diff.textContent()).toContain("What to summarize");
  }, 180_000);

  it("edits conditional branches as forms, validated at the branch and drawn in the graph", async () => {
    const picker = page.getByLabel("Add a step that runs");
    await picker.selectOption({ label: "Summarizer" });
    await page.getByRole("button", { name: "Add step" }).click();
    await step("Step 3: summarizer_2").waitFor();
    await step("Step 3: summarizer_2").getByLabel("Source of topic").selectOption("input");

    // The first step branches: on the topic to the third step, otherwise to filing.
    const first = step("Step 1: summarizer");
    await first.getByLabel("After summarizer").selectOption({ label: "Branch on conditions…" });
    const branch = first.getByRole("group", { name: "Branch 1 of summarizer" });
    expect(await branch.getByLabel("Then").inputValue()).toBe("filing");
    await branch.getByLabel("Value of").selectOption("inputs.topic");
    await branch.getByLabel("Operator").selectOption({ label: "equals" });
    await branch.getByLabel("Fixed value").fill("glazes");
    await branch.getByLabel("Then").selectOption({ label: "Go to summarizer_2" });
    await first.getByLabel("When no branch holds").selectOption({ label: "Go to filing" });
    await page.getByText("The workflow is valid.").waitFor();
    const graph = page.getByRole("figure");
    await graph.getByText("1: topic == glazes").waitFor();
    await graph.getByText("2: otherwise").waitFor();

    // A condition on a step that cannot have run yet: the finding is at the branch.
    await branch.getByLabel("Value of").selectOption("steps.summarizer_2.output");
    await branch.getByText(/cannot have run before step "summarizer"/).waitFor();
    await page.getByText(/The workflow has errors/).waitFor();
    await page.evaluate("scrollTo(0, 0)");
    await b.screen("agent-builder-branches");
    await branch.getByLabel("Value of").selectOption("steps.summarizer.output");
    await branch.getByLabel("At path (optional)").fill("kind");
    await branch.getByLabel("Fixed value").fill("3");
    await page.getByText("The workflow is valid.").waitFor();

    // The JSON view holds the branches as JSON Logic; a number typed is a number.
    await page.getByRole("tab", { name: "JSON" }).click();
    const saved = JSON.parse(await page.getByLabel("Workflow (JSON)").inputValue());
    expect(saved.steps[0].next).toEqual([
      { when: { "==": [{ var: "steps.summarizer.output.kind" }, 3] }, to: "summarizer_2" },
      { when: true, to: "filing" },
    ]);
    await page.getByRole("tab", { name: "Builder" }).click();

    // Removing the only branch leaves the step going on to what "otherwise" named.
    await first.getByRole("button", { name: "Remove branch 1 of summarizer" }).click();
    expect(await first.getByLabel("After summarizer").inputValue()).toBe("filing");
    await page.getByText("The workflow is valid.").waitFor();
  }, 120_000);
});
