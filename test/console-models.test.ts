/**
 * The console's Models page (issue #48 "Console") in Debian's chromium: an admin is told next to
 * its field why a connection's name is refused, adds a provider connection (an OpenAI-compatible
 * endpoint: the OpenAI stub, since a remote provider cannot exist here) with a priced model, sees
 * the key only by its last four characters and the model listed as the organization's with its
 * prices, tests the connection (a real call the stub answers), builds a fallback route over it and
 * the deployment's model, finds the route offered by the version editor's model picker and by the
 * playground, and deletes the route after a question (Cancel keeps it). Screens are checked with
 * axe at 1366 px and 390 px and photographed into test-artifacts/console/.
 */
import { parseHostPatterns } from "@kiln/kit/outbound/host-patterns";
import { type OpenAIStub, startOpenAIStub } from "@kiln/testing/openai-stub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";

let c: ConsoleBrowser;
let stub: OpenAIStub;

beforeAll(async () => {
  stub = await startOpenAIStub({ models: ["echo-1", "echo-2"] });
  c = await openConsole({ connections: { privateHosts: parseHostPatterns("127.0.0.1") } });
  await signUp(c.page, c.base, "Difference Engines");
}, 60_000);

afterAll(async () => {
  await c?.close();
  await stub?.close();
});

describe("the console's Models page", () => {
  it("adds a connection, tests it, builds a route that the version editor and the playground offer", async () => {
    const { page, base } = c;
    await page.getByRole("link", { name: "Models" }).click();
    await page.getByRole("heading", { level: 1, name: "Models" }).waitFor();
    const models = page.getByRole("region", { name: "Organization models" });
    await models.getByRole("cell", { name: "local/echo", exact: true }).waitFor();
    await page.getByText("No connection yet: add one below.").waitFor();

    // A name the API refuses is told next to its field, and nothing is added.
    const form = page.getByRole("form", { name: "Add a connection" });
    await form.getByLabel("Provider").selectOption("openai_compatible");
    await form.getByLabel("Connection name").fill("Not A Slug!");
    await form.getByLabel("Base URL").fill(stub.baseUrl);
    await form.getByRole("button", { name: "Add connection" }).click();
    const nameIssue = form.locator(".field", { has: page.getByLabel("Connection name") }).locator(".issue");
    await nameIssue.waitFor();
    expect(await nameIssue.textContent()).not.toBe("");
    await page.getByText("No connection yet: add one below.").waitFor();

    await form.getByLabel("Connection name").fill("lab");
    await form.getByLabel("API key").fill("sk-test-models-page-1234");
    await form.getByLabel("Model 1", { exact: true }).fill("echo-1");
    await form.getByLabel("Model 1 input price").fill("1");
    await form.getByLabel("Model 1 output price").fill("2");
    await form.getByRole("button", { name: "Add connection" }).click();
    const connections = page.getByRole("region", { name: "Provider connections" });
    const row = connections.getByRole("row").filter({ hasText: "lab" });
    await row.waitFor();
    // The key is never shown, only its last four characters.
    expect(await row.textContent()).toContain("1234");
    expect(await page.content()).not.toContain("sk-test-models-page-1234");
    expect(await form.getByLabel("API key").inputValue()).toBe("");
    // The connection's model is the organization's now, with its prices.
    const own = models.getByRole("row").filter({ hasText: "lab/echo-1" });
    await own.waitFor();
    expect(await own.textContent()).toContain("your connection");
    expect(await own.textContent()).toContain("$1.00");
    expect(await own.textContent()).toContain("$2.00");

    await row.getByRole("button", { name: "Test lab" }).click();
    await row
      .getByRole("status")
      .filter({ hasText: /^Reachable in \d+ ms; it lists 2 models\.$/ })
      .waitFor();

    // What the provider lists and the connection lacks is added in one click, the prices kept.
    await row.getByRole("button", { name: "Add the 1 listed model it lacks" }).click();
    const listedModel = models.getByRole("row").filter({ hasText: "lab/echo-2" });
    await listedModel.waitFor();
    expect(await listedModel.textContent()).toContain("price unknown");
    expect(await models.getByRole("row").filter({ hasText: "lab/echo-1" }).textContent()).toContain("$1.00");

    // A preset fills the kind, the endpoint and a name.
    await form.getByLabel("Start from").selectOption({ label: "Groq" });
    expect(await form.getByLabel("Base URL").inputValue()).toBe("https://api.groq.com/openai/v1");
    expect(await form.getByLabel("Connection name").inputValue()).toBe("groq");
    expect(await form.getByLabel("Provider").inputValue()).toBe("openai_compatible");

    // A fallback route over the connection's model and the deployment's.
    const routeForm = page.getByRole("form", { name: "Build a route" });
    await routeForm.getByLabel("Route name").fill("careful");
    await routeForm.getByLabel("Target 1", { exact: true }).selectOption("lab/echo-1");
    await routeForm.getByLabel("Target 2", { exact: true }).selectOption("local/echo");
    await routeForm.getByRole("button", { name: "Create route" }).click();
    const routes = page.getByRole("region", { name: "Model routes" });
    const route = routes.getByRole("row").filter({ hasText: "route/careful" });
    await route.waitFor();
    expect(await route.textContent()).toContain("1. lab/echo-1");
    expect(await route.textContent()).toContain("2. local/echo");
    await c.screen("models");

    // What the API holds is what the page showed.
    const { sdk, organizationId } = await consoleSdk(page, base);
    const listed = (await sdk.providerConnections.list({ organizationId })).data;
    expect(listed.map((x) => [x.name, x.provider, x.baseUrl, x.models.map((m) => m.id)])).toEqual([
      ["lab", "openai_compatible", stub.baseUrl, ["lab/echo-1", "lab/echo-2"]],
    ]);

    // The version editor offers the organization's models and its route.
    const prompt = await sdk.prompts.create({ organizationId, name: "Routed" });
    const version = await sdk.prompts.createVersion(prompt.id, { systemPrompt: "Say hi" });
    await sdk.prompts.publish(prompt.id, { versionId: version.id });
    await page.goto(`${base}/prompts/${prompt.id}`);
    const picker = page.getByLabel("Model", { exact: true });
    await picker
      .locator('optgroup[label="Routes"] option', { hasText: "route/careful" })
      .waitFor({ state: "attached" });
    expect(await picker.locator('optgroup[label="Available"] option').allTextContents()).toContainEqual(
      expect.stringMatching(/^lab\/echo-1 · \$1\.00 in \/ \$2\.00 out per M tokens$/),
    );
    await picker.selectOption("route/careful");
    await page.getByText("A route: each run tries its targets as the Models page shows them.").waitFor();

    // And the playground, for the model of a prompt run.
    await page.getByRole("link", { name: "Playground" }).click();
    await page.getByRole("heading", { level: 1, name: "Playground" }).waitFor();
    await page.getByLabel("Prompt or skill").selectOption({ label: "Routed" });
    await page
      .getByLabel("Model", { exact: true })
      .locator('optgroup[label="Routes"] option', { hasText: "route/careful" })
      .waitFor({ state: "attached" });

    // Deleted after a question; Cancel keeps it.
    await page.getByRole("link", { name: "Models" }).click();
    await route.getByRole("button", { name: "Delete route/careful" }).click();
    await page.getByRole("button", { name: "Cancel" }).click();
    await route.waitFor();
    await route.getByRole("button", { name: "Delete route/careful" }).click();
    await page.getByRole("button", { name: "Yes, delete route/careful" }).click();
    await page.getByText("No route yet: build one below.").waitFor();
    const cookie = (await page.context().cookies(`${base}/api`)).find((k) => k.name === "kiln_session");
    const left = await fetch(`${base}/api/model-routes?organizationId=${organizationId}`, {
      headers: { authorization: `Bearer ${cookie?.value}` },
    });
    expect(((await left.json()) as { data: unknown[] }).data).toEqual([]);
  }, 120_000);
});
