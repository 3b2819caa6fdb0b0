/**
 * `kiln mcp` (docs/mcp.md): the official MCP client over stdio, through the launcher's relay
 * (run as TypeScript through tsx), to the embedded platform's /mcp: prompts and a stored skill run.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTestClient } from "@kiln/testing/test-client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

describe("kiln mcp over stdio", () => {
  let kiln: EmbeddedKiln;
  let base: string;
  let flow: FlowResult;
  let client: Client;
  let promptName: string;

  beforeAll(async () => {
    ({ kiln, baseUrl: base } = await startEmbedded());
    flow = await runIdentityFlow(base, ["prompts:read", "skills:read", "runs:write", "runs:read"]);
    const api = createTestClient(base);
    const greeting = await api.createPublishedPrompt(flow.token, flow.organizationId, {
      systemPrompt: "Greet {{name}}.",
      variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    });
    promptName = greeting.prompt.name;
    const skill = await api.createSkill(flow.token, flow.organizationId, { name: "Stdio greeter" });
    await api.replaceSkillPrompts(flow.token, skill.draftVersionId ?? "", [{ promptId: greeting.prompt.id }]);
    await api.publishSkill(flow.token, skill.id);

    client = new Client({ name: "kiln-stdio-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ["--import", "tsx", join(ROOT, "launcher/src/main.ts"), "mcp"],
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "", KILN_URL: base, KILN_API_KEY: flow.apiKey, KILN_MCP_LABELS: "latest" },
        stderr: "inherit",
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await kiln?.close();
  });

  it("relays prompts and tool calls to the gateway's /mcp", async () => {
    expect(client.getServerVersion()).toMatchObject({ name: "kiln" });
    const names = (await client.listPrompts()).prompts.map((p) => p.name);
    expect(names).toEqual([promptName, `${promptName}@latest`]);
    const got = await client.getPrompt({ name: promptName, arguments: { name: "Ada" } });
    expect(got.messages[0]?.content).toMatchObject({ type: "text", text: "Greet Ada." });

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["skill_stdio_greeter"]);
    const ran = await client.callTool({ name: "skill_stdio_greeter", arguments: { name: "Ada" } });
    expect(ran.isError).toBeFalsy();
    const run = (ran._meta as { "kiln/run": { id: string } })["kiln/run"];
    const stored = await fetch(`${base}/api/skill-runs/${run.id}`, {
      headers: { authorization: `Bearer ${flow.apiKey}` },
    });
    expect(stored.status).toBe(200);
  });
});
