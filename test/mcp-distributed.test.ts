/**
 * Kiln as an MCP server in the distributed mode (docs/mcp.md): the gateway process serves /mcp,
 * calling the services over the network, and listens to the catalog's events on nats-server
 * (NATS_URL) for list-changed notifications. The official client initializes, lists prompts,
 * calls a skill whose stored run /api/runs then shows, and hears list_changed after a publish
 * made through the REST API, in its own organization only.
 */
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  LATEST_PROTOCOL_VERSION,
  PromptListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Distributed, startDistributed } from "./support/distributed.js";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { connectMcp } from "./support/mcp-client.js";

const SCOPES = ["prompts:read", "skills:read", "agents:read", "runs:read", "runs:write"];
const POLL = { timeout: 10_000, interval: 50 };

describe("Kiln as an MCP server (distributed mode)", () => {
  let kiln: Distributed;
  let base: string;
  let api: TestClient;
  let flow: FlowResult;
  let promptId: string;
  const variablesSchema = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
  const clients: Client[] = [];

  beforeAll(async () => {
    kiln = await startDistributed({ mongoUrl: inject("mongoUrl"), natsUrl: inject("natsUrl") });
    base = kiln.gatewayUrl;
    api = createTestClient(base);
    flow = await runIdentityFlow(base, SCOPES);
    const greeting = await api.createPublishedPrompt(flow.token, flow.organizationId, {
      systemPrompt: "Greet {{name}}.",
      variablesSchema,
    });
    promptId = greeting.prompt.id;
    const skill = await api.createSkill(flow.token, flow.organizationId, { name: "Greeter" });
    await api.replaceSkillPrompts(flow.token, skill.draftVersionId ?? "", [{ promptId }]);
    await api.publishSkill(flow.token, skill.id);
  }, 180_000);

  afterAll(async () => {
    for (const client of clients) await client.close();
    await kiln?.stop();
  });

  it("initializes, lists prompts and calls a skill whose run /api/runs shows", async () => {
    const { client, transport } = await connectMcp(base, flow.apiKey);
    clients.push(client);
    expect(transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    expect(client.getServerCapabilities()).toMatchObject({
      prompts: { listChanged: true },
      tools: { listChanged: true },
    });

    const { prompts } = await client.listPrompts();
    expect(prompts).toHaveLength(1);
    expect(prompts[0]?.arguments).toEqual([{ name: "name", required: true }]);

    const result = await client.callTool({ name: "skill_greeter", arguments: { name: "Ada" } });
    expect(result.isError).toBeFalsy();
    const run = result._meta?.["kiln/run"] as { id: string; kind: string; status: string } | undefined;
    expect(run).toMatchObject({ kind: "skill", status: "succeeded" });
    const listed = await api.get<{ data: { id: string; status: string }[] }>("/api/runs?kind=skill", {
      token: flow.apiKey,
    });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: run?.id, status: "succeeded" })]);
  });

  it("tells the organization's sessions of a publish, through the bus, and no other organization's", async () => {
    const mine = await connectMcp(base, flow.apiKey);
    const other = await runIdentityFlow(base, SCOPES);
    const theirs = await connectMcp(base, other.apiKey);
    clients.push(mine.client, theirs.client);
    const heard = { mine: { prompts: 0, tools: 0 }, theirs: { prompts: 0, tools: 0 } };
    for (const [who, c] of [
      ["mine", mine.client],
      ["theirs", theirs.client],
    ] as const) {
      c.setNotificationHandler(PromptListChangedNotificationSchema, async () => {
        heard[who].prompts++;
      });
      c.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        heard[who].tools++;
      });
    }
    await Promise.all([mine.eventStream, theirs.eventStream]);

    const version = await api.createPromptVersion(flow.token, promptId, {
      systemPrompt: "Greet {{name}} warmly.",
      variablesSchema,
    });
    await api.publishPrompt(flow.token, promptId, version.id);
    await expect.poll(() => heard.mine, POLL).toEqual({ prompts: 1, tools: 0 });
    const got = await mine.client.getPrompt({
      name: (await mine.client.listPrompts()).prompts[0]?.name ?? "",
      arguments: { name: "Ada" },
    });
    expect(got.messages[0]?.content).toMatchObject({ text: "Greet Ada warmly." });

    // The other organization's session was listening (its own publish reaches it), and heard nothing of ours.
    await api.createPublishedPrompt(other.token, other.organizationId, { systemPrompt: "Hi." });
    await expect.poll(() => heard.theirs, POLL).toEqual({ prompts: 1, tools: 0 });
    expect(heard.mine).toEqual({ prompts: 1, tools: 0 });
  });
});
