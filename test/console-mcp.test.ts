/**
 * The console's MCP page (docs/console.md, the MCP screen) in Debian's chromium: the endpoint URL, a key made
 * on the page for MCP's scopes, and a client configuration copied with the button; the copied
 * configuration is then used as is by the official MCP client. Checked with axe at 1366 px and
 * 390 px and photographed into test-artifacts/console/.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, openConsole, signUp } from "./support/console-browser.js";

let b: ConsoleBrowser;

beforeAll(async () => {
  b = await openConsole();
}, 60_000);

afterAll(async () => {
  await b?.close();
});

describe("the console's MCP page", () => {
  it("shows the endpoint, makes a key and copies a configuration an MCP client can use", async () => {
    const { page, base } = b;
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    await signUp(page, base, "Context Protocols");
    await page.getByRole("link", { name: "MCP", exact: true }).click();
    await page.getByRole("heading", { name: "MCP", exact: true }).waitFor();

    const endpoint = page.getByRole("figure", { name: /Streamable HTTP/ }).locator("pre");
    await endpoint.waitFor();
    expect(await endpoint.textContent()).toBe(`${base}/mcp`);
    await page.getByRole("button", { name: "Copy endpoint URL" }).click();
    await page.getByRole("status").filter({ hasText: "Copied the endpoint URL." }).waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(`${base}/mcp`);

    // Before a key: a placeholder, never a real-looking key.
    const config = page.getByRole("figure", { name: /Run in a terminal/ }).locator("pre");
    await config.waitFor();
    expect(await config.textContent()).toContain("Bearer sk_your_api_key");

    await page.getByRole("button", { name: "Create a key for MCP" }).click();
    await page.getByRole("status").filter({ hasText: "shown once" }).waitFor();
    await page.getByText(/Bearer sk_(?!your)/).waitFor();
    expect(await config.textContent()).toMatch(
      /^claude mcp add --transport http kiln http:\/\/\S+\/mcp \\\n {2}--header "Authorization: Bearer sk_\w+"$/,
    );

    await page.getByLabel("Prompt labels to offer as name@label (optional, comma-separated)").fill("production, ");
    await page.getByRole("radio", { name: "Cursor, Windsurf" }).check();
    const cursor = page.getByRole("figure", { name: /cursor\/mcp\.json/ }).locator("pre");
    await cursor.waitFor();
    await b.screen("mcp");
    await page.getByRole("button", { name: "Copy configuration" }).click();
    await page.getByRole("status").filter({ hasText: "Copied the configuration." }).waitFor();
    const copied = JSON.parse((await page.evaluate("navigator.clipboard.readText()")) as string) as {
      mcpServers: { kiln: { url: string; headers: { Authorization: string } } };
    };
    const { url, headers } = copied.mcpServers.kiln;
    expect(url).toBe(`${base}/mcp?labels=production`);

    // What was copied connects: the official client, with that URL and header, lists the tools.
    const client = new Client({ name: "console-copy", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    expect(client.getServerVersion()).toMatchObject({ name: "kiln" });
    expect((await client.listTools()).tools).toEqual([]);
    await client.close();

    // The stdio form names this gateway and the key.
    await page.getByRole("radio", { name: "Local process (stdio)" }).check();
    const stdio = page.getByRole("figure", { name: /pnpm kiln mcp/ }).locator("pre");
    await stdio.waitFor();
    const env = (
      JSON.parse((await stdio.textContent()) ?? "{}") as { mcpServers: { kiln: { env: Record<string, string> } } }
    ).mcpServers.kiln.env;
    expect(env).toEqual({
      KILN_URL: base,
      KILN_API_KEY: headers.Authorization.replace("Bearer ", ""),
      KILN_MCP_LABELS: "production",
    });
  });
});
