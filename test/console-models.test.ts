/**
 * The console's Models page (issue #48 "Console") in Debian's chromium: an admin is told next to
 * its field why a connection's name is refused, adds a provider connection (an OpenAI-compatible
 * endpoint: the OpenAI stub, since a remote provider cannot exist here) with a priced model, sees
 * the key only by its last four characters and the model listed as the organization's with its
 * prices, tests the connection (a real call the stub answers), builds a fallback route over it and
 * the deployment's model, finds the route offered by the version editor's model picker and by the
 * playground, and deletes the route after a question (Cancel keeps it). Then edits the connection
 * in place: the form comes filled but for the key, a bad price is told beside its model's field, a
 * price changed, a model's API chosen, a model removed and the key rotated are what the API then
 * holds, and the next call to the provider carries the new key. Screens are checked with axe at
 * 1366 px and 390 px and photographed into test-artifacts/console/.
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
    await page.getByRole("link", { name: "Playground", exact: true }).click();
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

  it("edits a connection in place: prices, a model's API, a removed model and a rotated key reach the API", async () => {
    const { page, base } = c;
    const row = page.getByRole("region", { name: "Provider connections" }).getByRole("row").filter({ hasText: "lab" });
    await row.getByRole("button", { name: "Edit lab" }).click();
    const form = page.getByRole("form", { name: "Edit lab" });
    await form.waitFor();
    // Filled with the connection, the key left out: empty keeps it.
    expect(await form.getByLabel("API key").inputValue()).toBe("");
    await form.getByText("The key ending 1234 is kept unless you type a new one.").waitFor();
    expect(await form.getByLabel("Base URL").inputValue()).toBe(stub.baseUrl);
    expect(await form.getByLabel("Model 1", { exact: true }).inputValue()).toBe("echo-1");
    expect(await form.getByLabel("Model 1 input price").inputValue()).toBe("1");
    expect(await form.getByLabel("Model 1 output price").inputValue()).toBe("2");
    expect(await form.getByLabel("Model 2", { exact: true }).inputValue()).toBe("echo-2");
    expect(await form.getByLabel("Model 2 input price").inputValue()).toBe("");

    // A price the API refuses is told beside that model's field, and nothing changes.
    await form.getByLabel("Model 2 input price").fill("-3");
    await form.getByRole("button", { name: "Save lab" }).click();
    const priceIssue = form.locator(".field", { has: page.getByLabel("Model 2 input price") }).locator(".issue");
    await priceIssue.waitFor();
    expect(await priceIssue.textContent()).not.toBe("");
    await c.screen("models-edit");
    const { sdk, organizationId } = await consoleSdk(page, base);
    const before = (await sdk.providerConnections.list({ organizationId })).data[0];
    expect(before?.models.map((m) => m.inputPerMTokUsd)).toEqual([1, null]);

    // A model added and removed again, a price changed, the API chosen, a model removed, the key rotated.
    await form.getByRole("button", { name: "Add a model" }).click();
    await form.getByLabel("Model 3", { exact: true }).fill("echo-3");
    await form.getByRole("button", { name: "Remove model 3" }).click();
    expect(await form.getByLabel("Model 3", { exact: true }).count()).toBe(0);
    await form.getByLabel("Model 2 input price").fill("0.5");
    await form.getByLabel("Model 2 output price").fill("0.75");
    await form.getByLabel("Model 1 output price").fill("3");
    await form.getByLabel("Model 1 API").selectOption("responses");
    await form.getByLabel("API key").fill("sk-rotated-models-page-5678");
    await form.getByRole("button", { name: "Save lab" }).click();
    await form.waitFor({ state: "detached" });
    await row.filter({ hasText: "5678" }).waitFor();
    expect(await page.content()).not.toContain("sk-rotated-models-page-5678");

    const after = (await sdk.providerConnections.list({ organizationId })).data[0];
    expect(after).toMatchObject({ name: "lab", apiKeyHint: "…5678", baseUrl: stub.baseUrl });
    expect(after?.models.map((m) => [m.model, m.inputPerMTokUsd, m.outputPerMTokUsd, m.api ?? null])).toEqual([
      ["echo-1", 1, 3, "responses"],
      ["echo-2", 0.5, 0.75, null],
    ]);
    const models = page.getByRole("region", { name: "Organization models" });
    expect(await models.getByRole("row").filter({ hasText: "lab/echo-1" }).textContent()).toContain("$3.00");

    // The next call to the provider carries the new key.
    stub.reset();
    await row.getByRole("button", { name: "Test lab" }).click();
    await row
      .getByRole("status")
      .filter({ hasText: /^Reachable in/ })
      .waitFor();
    expect(stub.requests.at(-1)?.headers.authorization).toBe("Bearer sk-rotated-models-page-5678");

    // A model removed in the form is gone from the connection.
    await row.getByRole("button", { name: "Edit lab" }).click();
    await form.getByRole("button", { name: "Remove model 2" }).click();
    await form.getByRole("button", { name: "Save lab" }).click();
    await form.waitFor({ state: "detached" });
    await models.getByRole("row").filter({ hasText: "lab/echo-2" }).waitFor({ state: "detached" });
    const last = (await sdk.providerConnections.list({ organizationId })).data[0];
    expect(last?.models.map((m) => m.model)).toEqual(["echo-1"]);
    expect(last?.apiKeyHint).toBe("…5678");
  }, 120_000);

  it("adds an Azure OpenAI connection with its api-version, a deployment and cached and reasoning prices", async () => {
    const { page, base } = c;
    const form = page.getByRole("form", { name: "Add a connection" });
    await form.getByLabel("Provider").selectOption("azure_openai");
    // Only Azure asks for these; a model's other prices are folded until opened.
    await form.getByLabel("API version").waitFor();
    expect(await form.getByLabel("API version").getAttribute("placeholder")).toBe("2024-10-21");
    await form.getByLabel("Connection name").fill("azure");
    await form.getByLabel("API key").fill("azure-key-models-page-9012");
    await form.getByLabel("Base URL").fill(stub.baseUrl);
    await form.getByLabel("API version").fill("2025-01-01-preview");
    await form.getByLabel("Model 1", { exact: true }).fill("gpt-4o");
    await form.getByLabel("Model 1 deployment").fill("prod-gpt4o");
    await form.getByLabel("Model 1 input price").fill("2.5");
    await form.getByLabel("Model 1 output price").fill("10");
    await form.getByText("Model 1: cached, cache-write and reasoning prices").click();
    await form.getByLabel("Model 1 cached input price").fill("1.25");
    await form.getByLabel("Model 1 reasoning price").fill("12");
    await c.screen("models-azure");
    await form.getByRole("button", { name: "Add connection" }).click();
    const row = page
      .getByRole("region", { name: "Provider connections" })
      .getByRole("row")
      .filter({ hasText: "azure" });
    await row.filter({ hasText: "9012" }).waitFor();

    const { sdk, organizationId } = await consoleSdk(page, base);
    const azure = (await sdk.providerConnections.list({ organizationId })).data.find((x) => x.name === "azure");
    expect(azure).toMatchObject({
      provider: "azure_openai",
      apiVersion: "2025-01-01-preview",
      deployments: { "gpt-4o": "prod-gpt4o" },
    });
    expect(
      azure?.models.map((m) => [
        m.model,
        m.inputPerMTokUsd,
        m.cachedInputPerMTokUsd,
        m.cacheWritePerMTokUsd,
        m.reasoningPerMTokUsd,
      ]),
    ).toEqual([["gpt-4o", 2.5, 1.25, null, 12]]);
    const models = page.getByRole("region", { name: "Organization models" });
    const listed = models.getByRole("row").filter({ hasText: "azure/gpt-4o" });
    await listed.waitFor();
    expect(await listed.textContent()).toContain("cached $1.25");
    expect(await listed.textContent()).toContain("reasoning $12.00");

    // Edited, the form comes back with the deployment and the prices it was given.
    await row.getByRole("button", { name: "Edit azure" }).click();
    const edit = page.getByRole("form", { name: "Edit azure" });
    expect(await edit.getByLabel("API version").inputValue()).toBe("2025-01-01-preview");
    expect(await edit.getByLabel("Model 1 deployment").inputValue()).toBe("prod-gpt4o");
    expect(await edit.getByLabel("Model 1 cached input price").inputValue()).toBe("1.25");
    await edit.getByLabel("Model 1 cache-write price").fill("3");
    await edit.getByRole("button", { name: "Save azure" }).click();
    await edit.waitFor({ state: "detached" });
    const saved = (await sdk.providerConnections.list({ organizationId })).data.find((x) => x.name === "azure");
    expect(saved?.models[0]).toMatchObject({
      cachedInputPerMTokUsd: 1.25,
      cacheWritePerMTokUsd: 3,
      reasoningPerMTokUsd: 12,
    });
    expect(saved?.deployments).toEqual({ "gpt-4o": "prod-gpt4o" });
    await c.screen("models-azure-listed");
  }, 120_000);
});
