/**
 * The console in a real browser (issue #16): Debian's chromium driven by playwright-core, against
 * the embedded platform serving console/dist at / of the same origin as /api. Through the UI only:
 * sign up → onboarding (workspace, plan, starting place) → a prompt with a version and a
 * {{variable}} → publish → run it in the playground → models, users, billing → sign out and in.
 * Every screen is checked with axe-core (no serious or critical violation) at 1366 px and 390 px,
 * and photographed into test-artifacts/console/. The gateway's Content-Security-Policy is on
 * (issue #32): the browser reports no violation of it along the way.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "./bench/load.js";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";

const CONSOLE_DIR = join(ROOT, "console/dist");
const ARTIFACTS = join(ROOT, "test-artifacts/console");
const AXE = readFileSync(join(ROOT, "node_modules/axe-core/axe.min.js"), "utf8");

let kiln: EmbeddedKiln;
let base: string;
let browser: Browser;
let page: Page;
/** What the browser said about the Content-Security-Policy (it logs every refusal to the console). */
const cspViolations: string[] = [];

/** axe-core on the page as it is (injected by setUpPage): the serious and critical violations, by rule. */
async function accessibilityViolations(p: Page): Promise<string[]> {
  // Evaluated in the page (a string: this file is compiled without the DOM's types).
  const result = (await p.evaluate("axe.run(document)")) as {
    violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/** The screen, checked and photographed at a desktop and a phone width. */
async function screen(name: string) {
  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: 900 });
    expect(await accessibilityViolations(page), `${name} at ${width}px`).toEqual([]);
    // Nothing wider than the window: the page works at this width.
    const overflow = (await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")) as number;
    expect(overflow, `${name} overflows at ${width}px`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1366, height: 900 });
}

beforeAll(async () => {
  expect(existsSync(join(CONSOLE_DIR, "index.html")), "console/dist: pnpm test builds it first").toBe(true);
  mkdirSync(ARTIFACTS, { recursive: true });
  ({ kiln, baseUrl: base } = await startEmbedded({ consoleDir: CONSOLE_DIR }));
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-background-networking"],
  });
  page = await browser.newPage();
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  // axe-core in every document the page loads, as the browser's own script: an inline script tag
  // (page.addScriptTag) is what the policy refuses.
  await page.addInitScript({ content: AXE });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await kiln?.close();
});

describe("the console", () => {
  it("is served at / with its initial JavaScript under 250 KB gzipped, and the API beside it", async () => {
    const html = await (await fetch(`${base}/`, { headers: { accept: "text/html" } })).text();
    const scripts = [...html.matchAll(/src="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1] as string);
    expect(scripts.length).toBeGreaterThan(0);
    let gzipped = 0;
    for (const s of scripts) gzipped += gzipSync(Buffer.from(await (await fetch(`${base}${s}`)).arrayBuffer())).length;
    expect(gzipped).toBeLessThan(250 * 1024);
    // A page of the console reloads in the browser; the API still answers JSON.
    const deep = await fetch(`${base}/prompts`, { headers: { accept: "text/html" } });
    expect(deep.headers.get("content-type")).toContain("text/html");
    const api = await fetch(`${base}/api/nothing`, { headers: { accept: "text/html" } });
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ error: { code: "not_found" } });
    const built = readdirSync(join(CONSOLE_DIR, "assets")).filter((f) => f.endsWith(".js"));
    expect(built.every((f) => statSync(join(CONSOLE_DIR, "assets", f)).size > 0)).toBe(true);
  });

  it("walks a new user from sign-up through onboarding to a run in the playground", async () => {
    const email = `console-${Date.now()}@example.test`;
    await page.goto(`${base}/signup`);
    await screen("signup");
    // An error the API gives is shown next to the field it names.
    await page.getByLabel("Email").fill("not-an-email");
    await page.getByLabel("Password").fill("short");
    await page.getByRole("button", { name: "Sign up" }).click();
    await expect.poll(() => page.locator(".issue").count()).toBeGreaterThan(0);
    await page.getByLabel("Full name").fill("Ada Lovelace");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("correct-horse-battery");
    await page.getByRole("button", { name: "Sign up" }).click();

    await page.getByRole("heading", { name: "Create your workspace" }).waitFor();
    await page.getByLabel("Organization name").waitFor();
    await screen("onboarding-workspace");
    // The name given at sign-up is not asked again.
    expect(await page.getByLabel("Your name").count()).toBe(0);
    await page.getByLabel("Organization name").fill("Analytical Engines");
    await page.getByRole("button", { name: "Create workspace" }).click();
    await page.getByRole("heading", { name: "Your plan" }).waitFor();
    expect(await page.locator("dl.summary").textContent()).toContain("Free");
    await screen("onboarding-plan");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("heading", { name: "Where do you want to start?" }).waitFor();
    await screen("onboarding-start");
    // The spec's four starting places (Users is the Members page; Billing the Usage page).
    for (const place of ["Playground", "Models", "Members", "Billing"])
      await page.getByRole("button", { name: place }).waitFor();
    await page.getByRole("button", { name: "Playground" }).click();
    await page.getByRole("heading", { name: "Playground" }).waitFor();
    expect(await page.getByLabel("Organization").textContent()).toBe("Analytical Engines");
    await screen("playground-empty");

    // A prompt with a version, published.
    await page.getByRole("link", { name: "Prompts" }).click();
    await page.getByRole("heading", { name: "Prompts", exact: true }).waitFor();
    await page.getByLabel("Name").fill("Greeter");
    await page.getByRole("button", { name: "Create prompt" }).click();
    await page.getByRole("heading", { name: "Greeter" }).waitFor();
    await page.getByLabel("System prompt").fill("Greet {{name}} warmly.");
    expect(await page.locator("mark").textContent()).toBe("{{name}}");
    // The variables schema is checked as it is typed.
    await page.getByLabel("as JSON").check();
    await page.getByLabel("Variables schema (JSON Schema)").fill("{ not json");
    expect(await page.getByText(/is not JSON/).count()).toBe(1);
    expect(await page.getByRole("button", { name: "Review changes" }).isDisabled()).toBe(true);
    await page
      .getByLabel("Variables schema (JSON Schema)")
      .fill('{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}');
    await page.getByRole("button", { name: "Review changes" }).click();
    await page.getByRole("button", { name: "Create version 1" }).click();
    await page.getByRole("button", { name: "Publish version 1" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Go live with version 1" }).click();
    await page.getByText("published (live)").waitFor();
    // A second version, compared side by side with the first, and a label moved to it.
    await page.getByLabel("System prompt").fill("Welcome {{name}}, kindly.");
    await page.getByRole("button", { name: "Review changes" }).click();
    await page.getByRole("button", { name: "Create version 2" }).click();
    await page.getByRole("button", { name: "Publish version 2" }).waitFor();
    await page.getByLabel("From", { exact: true }).selectOption({ label: "Version 1" });
    await page.getByLabel("To", { exact: true }).selectOption({ label: "Version 2" });
    await page.getByRole("button", { name: "Compare" }).click();
    await page.getByRole("rowheader", { name: "System prompt (changed)" }).waitFor();
    expect(await page.getByRole("rowheader", { name: "Temperature", exact: true }).count()).toBe(1);
    await page.getByLabel("Label", { exact: true }).fill("staging");
    await page.getByLabel("Version", { exact: true }).selectOption({ label: "Version 2" });
    await page.getByRole("button", { name: "Move label" }).click();
    await page.getByText("staging → version 2").waitFor();
    await screen("prompt-detail");
    const greeterId = new URL(page.url()).pathname.split("/").pop() ?? "";
    await page.getByRole("link", { name: "Prompts" }).click();
    await page.getByRole("link", { name: "Greeter" }).waitFor();
    await screen("prompts");

    // Run it in the playground.
    await page.getByRole("link", { name: "Playground", exact: true }).click();
    await page.getByLabel("name (required)").fill("Ada");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    const run = page.getByRole("article").first();
    // The card appears as the run starts ("waiting for the model…"): read it once the run is stored.
    await run.getByRole("link", { name: "Open the stored run" }).waitFor();
    expect(await run.textContent()).toContain("Greet Ada warmly.");
    expect(await run.textContent()).toMatch(/succeeded · local\/echo · \d+ in \/ \d+ out tokens/);
    await screen("playground-run");

    // A skill composed of the prompt: preview the draft, publish, evaluate.
    await page.getByRole("link", { name: "Skills" }).click();
    await page.getByLabel("Skill name").fill("Greeting skill");
    await page.getByRole("button", { name: "Create skill" }).click();
    await page.getByRole("heading", { name: "Greeting skill" }).waitFor();
    await page.getByLabel("Published prompt").selectOption({ label: "Greeter" });
    await page.getByRole("button", { name: "Add step" }).click();
    await page.getByText("Greeter version 1").waitFor();
    await page.getByLabel("Skill input (JSON)").fill('{"name":"Grace"}');
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    await page.getByRole("article", { name: "Preview output" }).getByText("Greet Grace warmly.").waitFor();
    // A failed preview is told beside its button, and the earlier result goes.
    await page.getByLabel("Skill input (JSON)").fill("[1]");
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    const tryIt = page.getByRole("region", { name: "Preview" });
    await tryIt.getByRole("alert").getByText("The input must be a JSON object").waitFor();
    expect(await page.getByRole("article", { name: "Preview output" }).count()).toBe(0);
    await page.getByLabel("Skill input (JSON)").fill('{"name":"Grace"}');
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    await page.getByRole("article", { name: "Preview output" }).getByText("Greet Grace warmly.").waitFor();
    expect(await tryIt.getByRole("alert").count()).toBe(0);
    // Publishing a skill is asked for first; Cancel has the focus, and gives it back to the button.
    await page.getByRole("button", { name: "Publish…" }).click();
    const publishSkill = page.getByRole("alertdialog", { name: /Publish the draft of Greeting skill\?/ });
    expect(
      await publishSkill.getByRole("button", { name: "Cancel" }).evaluate((b) => b === b.ownerDocument.activeElement),
    ).toBe(true);
    await page.keyboard.press("Escape");
    await publishSkill.waitFor({ state: "detached" });
    expect(
      await page.getByRole("button", { name: "Publish…" }).evaluate((b) => b === b.ownerDocument.activeElement),
    ).toBe(true);
    await page.getByRole("button", { name: "Publish…" }).click();
    await publishSkill.getByRole("button", { name: "Publish the draft" }).click();
    await page.getByText("A version is published.").waitFor();
    await page.getByLabel("name (required)").fill("Ada");
    await page.getByRole("button", { name: "Add an assertion" }).click();
    await page.getByLabel("Text the output contains").fill("Greet Ada");
    await page.getByRole("button", { name: "Add case" }).click();
    await page.getByText("1 case.").waitFor();
    // Two more from a CSV file.
    await page.getByLabel("Import cases (JSON, JSONL or CSV)").setInputFiles({
      name: "cases.csv",
      mimeType: "text/csv",
      buffer: Buffer.from("name,input.name,contains\nGrace,Grace,Greet Grace\nAlan,Alan,Greet Alan"),
    });
    await page.getByText("3 cases.").waitFor();
    // One edited: renamed, same input and assertion.
    await page.getByRole("button", { name: "Edit Alan" }).click();
    await page.getByRole("heading", { name: "Edit the case Alan" }).waitFor();
    await page.getByLabel("Case name").fill("Alan Turing");
    await page.getByRole("button", { name: "Save case" }).click();
    await page.getByRole("cell", { name: "Alan Turing", exact: true }).waitFor();
    await page.getByLabel("against published").check();
    await page.getByRole("button", { name: "Run evaluation" }).click();
    await page.getByText(/^Evaluation completed: 3 cases: published 3\/3 passed/).waitFor({ timeout: 20_000 });
    // Each attempt links to its run.
    await page.getByText("1 attempt", { exact: true }).first().click();
    await page.getByRole("link", { name: "published run, attempt 1" }).first().click();
    await page.getByRole("heading", { name: /^skill run srun_/ }).waitFor();
    await page.goBack();
    await page.getByRole("link", { name: "Greeting skill" }).click();
    await page.getByRole("heading", { name: "Greeting skill" }).waitFor();
    await page.getByRole("region", { name: "Evaluation runs" }).getByRole("row").nth(1).waitFor();
    await screen("skill");
    // A new version, diffed against the published one.
    await page.getByRole("button", { name: "New version" }).click();
    await page.getByText("Editing the draft.").waitFor();
    await page.getByRole("button", { name: "Show diff" }).click();
    await page.getByRole("region", { name: "Skill version diff" }).or(page.getByText("No change.")).waitFor();

    // An agent: its workflow as a graph, issues pinned to a step, publish, run, rerun from a step, compare.
    const workflow = (secondRef: string) =>
      JSON.stringify({
        inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        entry: "greet",
        steps: [
          {
            id: "greet",
            type: "prompt",
            ref: { promptId: greeterId },
            input: { name: "{{inputs.name}}" },
            next: "again",
          },
          { id: "again", type: "prompt", ref: { promptId: secondRef }, input: { name: "{{steps.greet.output}}" } },
        ],
        output: "{{steps.again.output}}",
      });
    await page.getByRole("link", { name: "Agents" }).click();
    await page.getByLabel("Agent name").fill("Greeting agent");
    await page.getByRole("button", { name: "Create agent" }).click();
    await page.getByRole("heading", { name: "Greeting agent" }).waitFor();
    // The JSON view of the workflow builder (test/console-agents.test.ts builds one with the forms).
    await page.getByRole("tab", { name: "JSON" }).click();
    await page.getByLabel("Workflow (JSON)").fill(workflow("prm_00000000000000000000000000000000"));
    await page.getByRole("button", { name: "Save draft" }).click();
    await page.getByText(/The workflow has errors/).waitFor();
    await page.getByRole("tab", { name: "Builder" }).click();
    await page
      .getByRole("group", { name: "Step 2: again" })
      .getByText(/does not exist/)
      .waitFor();
    // Pinned in the graph too: the one step with issues is drawn as such.
    expect(await page.getByText("prompt · has issues").count()).toBe(1);
    await page.getByRole("tab", { name: "JSON" }).click();
    await page.getByLabel("Workflow (JSON)").fill(workflow(greeterId));
    await page.getByText("The workflow is valid.").waitFor();
    await page.getByRole("button", { name: "Publish…" }).click();
    await page.getByRole("button", { name: "Publish version 1" }).click();
    await page.getByText("A version is published.").waitFor();
    await page.getByLabel("name (required)").fill("Ada");
    await page.getByRole("button", { name: "Run the published version" }).click();
    await page.getByText("1 run this session; the last succeeded").waitFor();
    await page.getByLabel("Rerun from step").selectOption("again");
    await page.getByRole("button", { name: "Rerun", exact: true }).click();
    await page.getByText(/2 runs this session; the last succeeded, rerun of arun_\w+ from again/).waitFor();
    await page.getByRole("button", { name: "Compare the last two runs" }).click();
    await page.getByText(/greet: same output/).waitFor();
    await screen("agent");

    // Runs: the list filtered by kind, and an agent run with every step.
    await page.getByRole("link", { name: "Runs" }).click();
    await page.getByRole("heading", { name: "Runs", exact: true }).waitFor();
    await page.getByRole("table").waitFor();
    await page.getByLabel("Kind").selectOption("agent");
    await page.getByRole("button", { name: "Filter runs" }).click();
    await page.getByRole("table").waitFor();
    expect(await page.getByRole("cell", { name: "agent", exact: true }).count()).toBe(2);
    expect(await page.getByRole("cell", { name: "prompt", exact: true }).count()).toBe(0);
    await screen("runs");
    await page
      .getByRole("link", { name: /^arun_/ })
      .first()
      .click();
    await page.getByRole("heading", { name: /^agent run arun_/ }).waitFor();
    await page.getByRole("cell", { name: "again", exact: true }).waitFor();
    await screen("run");

    for (const [link, heading] of [
      ["Models", "Models"],
      ["Members", "Members"],
      ["Settings", "Settings"],
    ] as const) {
      await page.getByRole("link", { name: link }).click();
      await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
      await page.locator("table, dl").first().waitFor();
      await screen(link.toLowerCase());
    }
    expect(await page.locator("ul.label-list").textContent()).toContain("production");

    // The organization exported as one file, and a promptfoo config imported: a dry run, then for real.
    await page.getByRole("link", { name: "Export and import" }).click();
    await page.getByRole("heading", { name: "Export and import" }).waitFor();
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download export" }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^kiln-org_[0-9a-f]{32}\.json$/);
    const exported = JSON.parse(readFileSync((await download.path()) ?? "", "utf8"));
    expect(exported.format).toBe("kiln.bundle/v1");
    expect(exported.prompts.length).toBeGreaterThan(0);
    // Counted in words: "1 prompt", "2 prompts".
    const prompts = exported.prompts.length;
    await page.getByText(`Exported ${prompts} ${prompts === 1 ? "prompt" : "prompts"}, `).waitFor();
    await page.getByLabel(/^A file \(a Kiln export/).setInputFiles({
      name: "promptfooconfig.yaml",
      mimeType: "application/yaml",
      buffer: Buffer.from(
        "prompts: ['Greet {{name}} warmly']\ntests:\n  - vars: {name: Ada}\n    assert:\n      - type: icontains\n        value: ada\n      - type: javascript\n        value: output.length > 0\n",
      ),
    });
    await page.getByRole("button", { name: "Check (dry run)" }).click();
    await page.getByRole("heading", { name: "What the import would do" }).waitFor();
    await page.getByText("3 created, 0 updated, 0 skipped, 0 conflicts").waitFor();
    await page.getByText(/javascript is not imported/).waitFor();
    await screen("transfer");
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await page.getByRole("heading", { name: "Imported" }).waitFor();
    await page.getByText("3 created, 0 updated, 0 skipped, 0 conflicts").waitFor();

    // A tool, and an API key shown once then revoked.
    await page.getByRole("link", { name: "Tools" }).click();
    await page.getByLabel("Tool key").fill("weather");
    await page.getByLabel("Tool name").fill("Weather");
    await page.getByRole("button", { name: "Create tool" }).click();
    await page.getByText("(manual_stub, version 1)").waitFor();
    await screen("tools");
    // Its detail: a second version, and what changed in it.
    await page.getByRole("link", { name: "weather" }).click();
    await page.getByRole("heading", { name: "Tool weather" }).waitFor();
    await page.getByLabel("Configuration (JSON)").fill('{"result": {"ok": false}}');
    await page.getByRole("button", { name: "Create version" }).click();
    await page.getByRole("heading", { name: "Version 2" }).waitFor();
    await page.getByRole("cell", { name: "/config/result/ok" }).waitFor();
    await screen("tool");
    // The tool attached to a new prompt version, and to the skill's draft beside a bound second step.
    await page.getByRole("link", { name: "Prompts" }).click();
    await page.getByRole("link", { name: "Greeter" }).click();
    await page.getByLabel("System prompt").fill("Greet {{name}}, and use the weather tool.");
    await page.getByLabel("as JSON").check();
    await page
      .getByLabel("Variables schema (JSON Schema)")
      .fill('{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}');
    await page.getByLabel("weather").check();
    await page.getByLabel("Response format").selectOption("json_schema");
    await page
      .getByLabel("Output schema (JSON Schema)")
      .fill('{"type":"object","properties":{"greeting":{"type":"string"}},"required":["greeting"]}');
    await page.getByRole("button", { name: "Review changes" }).click();
    await page.getByRole("button", { name: "Create version 3" }).click();
    await page.getByText("Version 3 created as a draft.").waitFor();
    await page.getByRole("link", { name: "Skills" }).click();
    await page.getByRole("link", { name: "Greeting skill" }).click();
    await page.getByText("Editing the draft.").waitFor();
    await page.getByLabel(/^Bindings/).fill('{"name": "{{steps.step1.output}}"}');
    await page.getByRole("button", { name: "Add step" }).click();
    await page.getByRole("button", { name: "Remove step2" }).waitFor();
    expect(await page.locator("pre").filter({ hasText: "{{steps.step1.output}}" }).count()).toBe(1);
    // The box follows the stored skill version: it is ticked once the tools are replaced.
    await page.getByLabel("weather").click();
    await expect.poll(() => page.getByLabel("weather").isChecked()).toBe(true);
    await screen("skill-draft");
    // The playground runs a skill too, at a version picked.
    await page.getByRole("link", { name: "Playground", exact: true }).click();
    await page.getByLabel("Prompt or skill").selectOption({ label: "Greeting skill" });
    await page.getByLabel("Version", { exact: true }).selectOption({ label: "Version 1 (published)" });
    await page.getByLabel("name (required)").fill("Alan");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.getByRole("article").filter({ hasText: "Greet Alan warmly." }).waitFor();
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByLabel("Key name").fill("ci");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = await page.locator("code.secret").textContent();
    expect(key).toMatch(/^sk_/);
    await page.getByRole("button", { name: "Revoke ci" }).click();
    await page
      .getByRole("alertdialog", { name: /Revoke ci\?/ })
      .getByRole("button", { name: "Yes, revoke ci" })
      .click();
    await page.getByRole("cell", { name: "revoked" }).waitFor();
    await screen("api-keys");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to Kiln" }).waitFor();
    await screen("signin");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("correct-horse-battery");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Prompts", exact: true }).waitFor();
    await page.getByRole("link", { name: "Greeter" }).waitFor();
  }, 240_000);

  it("met no Content-Security-Policy violation, and would have seen one", async () => {
    expect(cspViolations).toEqual([]);
    // The listener hears a refusal: an inline script does not run, and the browser says why.
    await page.addScriptTag({ content: "window.inlineScriptRan = true;" }).catch(() => undefined);
    expect(await page.evaluate("window.inlineScriptRan === true")).toBe(false);
    await expect.poll(() => cspViolations.length).toBeGreaterThan(0);
    expect(cspViolations[0]).toContain("script-src 'self'");
  });
});
