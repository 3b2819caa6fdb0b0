/**
 * Kiln as an MCP server (docs/mcp.md) over Streamable HTTP with the official MCP client, against the
 * embedded platform: initialize, prompts with arguments, a skill and an agent as tools (their stored
 * runs visible through /api/runs), a failed run as a tool error, scopes, and another organization.
 */

import { loadProvidersConfig } from "@kiln/execution/config";
import { createLogger } from "@kiln/kit/logger";
import { buildEmbedded } from "@kiln/launcher/embedded";
import { createPublishedAgent } from "@kiln/testing/agent-fixture";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

const ALL_SCOPES = ["prompts:read", "skills:read", "agents:read", "runs:read", "runs:write", "labels:write"];

async function connect(base: string, key: string, query = "") {
  const client = new Client({ name: "kiln-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp${query}`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

describe("Kiln as an MCP server (embedded mode, Streamable HTTP)", () => {
  let stub: OpenAIStub;
  let kiln: Awaited<ReturnType<typeof buildEmbedded>>;
  let base: string;
  let api: TestClient;
  let flow: FlowResult;
  let promptName: string;
  let promptId: string;
  let skillName: string;
  let skillId: string;
  let agentId: string;
  const clients: Client[] = [];
  const open = async (key: string, query = "") => {
    const { client } = await connect(base, key, query);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    stub = await startOpenAIStub({ respond: () => stubReply.error(400, { message: "the model refuses" }) });
    kiln = await buildEmbedded({
      logger: createLogger({ name: "test", level: "silent" }),
      providers: loadProvidersConfig({
        OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
          { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "broken" }] },
        ]),
      }),
    });
    base = await kiln.gateway.app.listen({ host: "127.0.0.1", port: 0 });
    api = createTestClient(base);
    flow = await runIdentityFlow(base, ALL_SCOPES);
    const { token, organizationId } = flow;

    const greeting = await api.createPublishedPrompt(
      token,
      organizationId,
      {
        systemPrompt: "Greet {{name}} in {{language}}.",
        developerPrompt: "Count: {{count}}",
        variablesSchema: {
          type: "object",
          properties: {
            name: { type: "string", description: "who is greeted" },
            language: { type: "string" },
            count: { type: "integer" },
          },
          required: ["name"],
        },
      },
      { description: "A greeting" },
    );
    promptName = greeting.prompt.name;
    promptId = greeting.prompt.id;
    await api.createPrompt(token, organizationId, { name: "Never published" });

    const skill = await api.createSkill(token, organizationId, { name: "Greeter skill", description: "Greets" });
    await api.replaceSkillPrompts(token, skill.draftVersionId ?? "", [{ promptId: greeting.prompt.id }]);
    await api.publishSkill(token, skill.id);
    skillId = skill.id;
    skillName = "skill_greeter_skill";

    const broken = await api.createPublishedPrompt(token, organizationId, {
      systemPrompt: "Fail for {{name}}.",
      variablesSchema: { type: "object", properties: { name: { type: "string" } } },
      model: "stub/broken",
    });
    const failing = await api.createSkill(token, organizationId, { name: "Broken skill" });
    await api.replaceSkillPrompts(token, failing.draftVersionId ?? "", [{ promptId: broken.prompt.id }]);
    await api.publishSkill(token, failing.id);

    agentId = (await createPublishedAgent(api, token, organizationId)).agentId;
  }, 120_000);

  afterAll(async () => {
    for (const client of clients) await client.close();
    await kiln?.close();
    await stub?.close();
  });

  it("initializes a session on the current protocol revision", async () => {
    const { client, transport } = await connect(base, flow.apiKey);
    clients.push(client);
    expect(client.getServerVersion()).toMatchObject({ name: "kiln" });
    expect(client.getServerCapabilities()).toMatchObject({ prompts: {}, tools: {} });
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
  });

  it("lists published prompts with their arguments and renders one", async () => {
    const client = await open(flow.apiKey);
    const { prompts } = await client.listPrompts();
    // The greeting, the failing skill's prompt and the agent's two prompts; not the unpublished one.
    expect(prompts).toHaveLength(4);
    expect(prompts.map((p) => p.name)).not.toContain("Never published");
    const greeting = prompts.find((p) => p.name === promptName);
    expect(greeting).toMatchObject({
      description: "A greeting",
      arguments: [
        { name: "name", description: "who is greeted", required: true },
        { name: "language", required: false },
        { name: "count", required: false },
      ],
    });
    const got = await client.getPrompt({
      name: promptName,
      arguments: { name: "Ada", language: "French", count: "3" },
    });
    expect(got.messages).toEqual([
      { role: "user", content: { type: "text", text: "Greet Ada in French.", _meta: { "kiln/role": "system" } } },
      { role: "user", content: { type: "text", text: "Count: 3", _meta: { "kiln/role": "developer" } } },
    ]);
    await expect(client.getPrompt({ name: promptName, arguments: {} })).rejects.toThrow(/missing arguments: name/);
    await expect(client.getPrompt({ name: "Never published" })).rejects.toThrow(/no prompt named/);
  });

  it("offers labelled prompt versions as name@label when asked", async () => {
    await api.createPromptVersion(flow.token, promptId, {
      systemPrompt: "Hello {{name}}, a draft.",
      variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    });
    const client = await open(flow.apiKey, "?labels=latest");
    const names = (await client.listPrompts()).prompts.map((p) => p.name);
    expect(names).toContain(`${promptName}@latest`);
    expect(names).not.toContain("Never published@latest");
    const latest = await client.getPrompt({ name: `${promptName}@latest`, arguments: { name: "Ada" } });
    expect(latest.messages.map((m) => m.content)).toEqual([
      { type: "text", text: "Hello Ada, a draft.", _meta: { "kiln/role": "system" } },
    ]);
    const published = await client.getPrompt({ name: promptName, arguments: { name: "Ada" } });
    expect(published.messages[0]?.content).toMatchObject({ text: "Greet Ada in ." });
    const plain = await open(flow.apiKey);
    expect((await plain.listPrompts()).prompts.map((p) => p.name)).not.toContain(`${promptName}@latest`);
  });

  it("renders a chat version's few-shot turns in order and names its placeholder", async () => {
    const created = await api.post(
      `/api/prompts/${promptId}/versions`,
      {
        messages: [
          { role: "system", content: "Greet {{name}}." },
          { role: "user", content: "Greet Bo." },
          { role: "assistant", content: "Hello Bo!" },
          { role: "placeholder", name: "history" },
        ],
        variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      },
      { token: flow.token },
    );
    expect(created.status, created.text).toBe(201);
    const client = await open(flow.apiKey, "?labels=latest");
    const latest = await client.getPrompt({ name: `${promptName}@latest`, arguments: { name: "Ada" } });
    expect(latest.messages).toEqual([
      { role: "user", content: { type: "text", text: "Greet Ada.", _meta: { "kiln/role": "system" } } },
      { role: "user", content: { type: "text", text: "Greet Bo.", _meta: { "kiln/role": "user" } } },
      { role: "assistant", content: { type: "text", text: "Hello Bo!", _meta: { "kiln/role": "assistant" } } },
    ]);
    expect(latest._meta?.["kiln/placeholders"]).toEqual(["history"]);
  });

  it("lists skills and agents as tools and runs them as stored runs", async () => {
    const client = await open(flow.apiKey);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["agent_note_writer", "skill_broken_skill", skillName]);
    const skillTool = tools.find((t) => t.name === skillName);
    expect(skillTool).toMatchObject({ title: "Greeter skill", description: "Greets", inputSchema: { type: "object" } });
    expect(tools.find((t) => t.name === "agent_note_writer")?.inputSchema).toMatchObject({
      type: "object",
      required: ["topic", "city"],
    });

    const ran = await client.callTool({ name: skillName, arguments: { name: "Ada" } });
    expect(ran.isError).toBeFalsy();
    const run = (ran._meta as { "kiln/run": { id: string; kind: string; status: string } })["kiln/run"];
    expect(run).toMatchObject({ kind: "skill", status: "succeeded" });
    expect(ran.structuredContent).toMatchObject({ runId: run.id });
    expect(ran.content).toEqual([{ type: "text", text: expect.stringContaining("Ada") }]);
    const stored = await api.get<{ id: string; skillId: string }>(`/api/skill-runs/${run.id}`, { token: flow.apiKey });
    expect(stored.status, stored.text).toBe(200);
    expect(stored.body).toMatchObject({ id: run.id, skillId });

    const agentRan = await client.callTool({ name: "agent_note_writer", arguments: { topic: "tea", city: "Paris" } });
    expect(agentRan.isError).toBeFalsy();
    const agentRun = (agentRan._meta as { "kiln/run": { id: string } })["kiln/run"];
    const listed = await api.get<{ data: { id: string; kind: string }[] }>("/api/runs", {
      token: flow.apiKey,
      query: { kind: "agent" },
    });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.map((r) => r.id)).toContain(agentRun.id);
    const agentStored = await api.get(`/api/agent-runs/${agentRun.id}`, { token: flow.apiKey });
    expect(agentStored.body).toMatchObject({ id: agentRun.id, agentId, status: "succeeded" });
  });

  it("reports a failed run as a tool error with the run id, and bad input as a tool error", async () => {
    const client = await open(flow.apiKey);
    const failed = await client.callTool({ name: "skill_broken_skill", arguments: { name: "Ada" } });
    expect(failed.isError).toBe(true);
    const run = (failed._meta as { "kiln/run": { id: string; status: string } })["kiln/run"];
    expect(run.status).toBe("failed");
    expect(failed.content).toEqual([{ type: "text", text: expect.stringContaining(`run ${run.id} failed`) }]);
    const stored = await api.get(`/api/skill-runs/${run.id}`, { token: flow.apiKey });
    expect(stored.body).toMatchObject({ id: run.id, status: "failed" });

    const invalid = await client.callTool({ name: "agent_note_writer", arguments: { topic: "" } });
    expect(invalid.isError).toBe(true);
    expect(invalid.content).toEqual([{ type: "text", text: expect.stringMatching(/^invalid_argument: /) }]);
    await expect(client.callTool({ name: "skill_nothing", arguments: {} })).rejects.toThrow(/no tool named/);
  });

  it("lists and calls only what the key's scopes allow", async () => {
    const promptsOnly = await api.createApiKey(flow.token, flow.organizationId, ["prompts:read"]);
    const reader = await open(promptsOnly.key);
    expect((await reader.listPrompts()).prompts.map((p) => p.name)).toContain(promptName);
    expect((await reader.listTools()).tools).toEqual([]);
    await expect(reader.callTool({ name: skillName, arguments: { name: "Ada" } })).rejects.toThrow(/no tool named/);

    const skillsOnly = await api.createApiKey(flow.token, flow.organizationId, ["skills:read", "runs:write"]);
    const runner = await open(skillsOnly.key);
    expect((await runner.listPrompts()).prompts).toEqual([]);
    expect((await runner.listTools()).tools.map((t) => t.name).sort()).toEqual(["skill_broken_skill", skillName]);
  });

  it("shows another organization's key none of it, and keeps sessions to their key", async () => {
    const other = await runIdentityFlow(base, ALL_SCOPES);
    const stranger = await open(other.apiKey);
    expect((await stranger.listPrompts()).prompts).toEqual([]);
    expect((await stranger.listTools()).tools).toEqual([]);
    await expect(stranger.callTool({ name: skillName, arguments: { name: "Ada" } })).rejects.toThrow(/no tool named/);

    const { client, transport } = await connect(base, flow.apiKey);
    clients.push(client);
    const hijack = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${other.apiKey}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": transport.sessionId ?? "",
        "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(hijack.status).toBe(404);
  });

  it("refuses anonymous callers, access tokens and foreign origins", async () => {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "x", version: "1" } },
    });
    const post = (headers: Record<string, string>) =>
      fetch(`${base}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body,
      });
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: `Bearer ${flow.token}` })).status).toBe(403);
    expect((await post({ authorization: `Bearer ${flow.apiKey}`, origin: "https://evil.example" })).status).toBe(403);
    expect((await post({ authorization: `Bearer ${flow.apiKey}` })).status).toBe(200);
  });

  it("answers an empty JSON-RPC batch with an Invalid Request error (JSON-RPC 2.0), not 202", async () => {
    const r = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${flow.apiKey}`,
      },
      body: "[]",
    });
    expect(r.status).toBe(400);
    expect(await r.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32600, message: "Invalid Request: an empty batch" },
      id: null,
    });
  });
});
