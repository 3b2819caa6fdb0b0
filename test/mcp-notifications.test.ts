/**
 * What the MCP endpoint tells a client unasked (docs/mcp.md "List changes", and "Tools" on progress): the
 * official client's own notification handlers hear list_changed after a publish in the key's
 * organization only, and progress while a long agent run goes on.
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { createLogger } from "@kiln/kit/logger";
import { buildEmbedded } from "@kiln/launcher/embedded";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  type Progress,
  PromptListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { connectMcp } from "./support/mcp-client.js";

const SCOPES = ["prompts:read", "skills:read", "agents:read", "runs:read", "runs:write", "labels:write"];
const MODEL_LATENCY_MS = 4_500;
const POLL = { timeout: 5_000, interval: 25 };

/** A client that counts the list_changed notifications its own handlers receive. */
async function listening(base: string, key: string) {
  const { client, eventStream } = await connectMcp(base, key);
  const heard = { prompts: 0, tools: 0 };
  client.setNotificationHandler(PromptListChangedNotificationSchema, async () => {
    heard.prompts++;
  });
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    heard.tools++;
  });
  await eventStream;
  return { client, heard };
}

describe("MCP notifications (embedded mode)", () => {
  let stub: OpenAIStub;
  let kiln: Awaited<ReturnType<typeof buildEmbedded>>;
  let base: string;
  let api: TestClient;
  let flow: FlowResult;
  let other: FlowResult;
  const clients: Client[] = [];

  beforeAll(async () => {
    stub = await startOpenAIStub({ latencyMs: MODEL_LATENCY_MS, respond: () => stubReply.text("slow answer") });
    kiln = await buildEmbedded({
      logger: createLogger({ name: "test", level: "silent" }),
      providers: loadProvidersConfig({
        OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
          { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "slow" }] },
        ]),
      }),
    });
    base = await kiln.gateway.app.listen({ host: "127.0.0.1", port: 0 });
    api = createTestClient(base);
    flow = await runIdentityFlow(base, SCOPES);
    other = await runIdentityFlow(base, SCOPES);
  }, 120_000);

  afterAll(async () => {
    for (const client of clients) await client.close();
    await kiln?.close();
    await stub?.close();
  });

  it("declares list changes and tells only the publishing organization's sessions", async () => {
    const mine = await listening(base, flow.apiKey);
    const theirs = await listening(base, other.apiKey);
    clients.push(mine.client, theirs.client);
    expect(mine.client.getServerCapabilities()).toMatchObject({
      prompts: { listChanged: true },
      tools: { listChanged: true },
    });

    const hello = await api.createPublishedPrompt(flow.token, flow.organizationId, { systemPrompt: "Hello." });
    await expect.poll(() => mine.heard, POLL).toEqual({ prompts: 1, tools: 0 });
    const skill = await api.createSkill(flow.token, flow.organizationId, { name: "Fresh skill" });
    await api.replaceSkillPrompts(flow.token, skill.draftVersionId ?? "", [{ promptId: hello.prompt.id }]);
    await api.publishSkill(flow.token, skill.id);
    await expect.poll(() => mine.heard, POLL).toEqual({ prompts: 1, tools: 1 });
    // The new tool is there on the next list.
    const { tools } = await mine.client.listTools();
    expect(tools.map((t) => t.name)).toContain("skill_fresh_skill");

    // The other organization heard nothing of it; its own publish reaches it (so it was listening),
    // and not the first organization.
    await api.createPublishedPrompt(other.token, other.organizationId, { systemPrompt: "Hi." });
    await expect.poll(() => theirs.heard, POLL).toEqual({ prompts: 1, tools: 0 });
    expect(mine.heard).toEqual({ prompts: 1, tools: 1 });
  });

  it("reports progress while a long agent run goes on, with no total", async () => {
    const prompt = await api.createPublishedPrompt(flow.token, flow.organizationId, {
      systemPrompt: "Think about {{topic}}.",
      variablesSchema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
      model: "stub/slow",
    });
    const workflow = {
      inputSchema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
      entry: "think",
      steps: [
        { id: "think", type: "prompt", ref: { promptId: prompt.prompt.id }, input: { topic: "{{inputs.topic}}" } },
      ],
      output: "{{steps.think.output}}",
    };
    await api.createPublishedAgent(flow.token, flow.organizationId, "Slow thinker", workflow);

    const { client } = await connectMcp(base, flow.apiKey);
    clients.push(client);
    const progress: Progress[] = [];
    const result = await client.callTool({ name: "agent_slow_thinker", arguments: { topic: "tea" } }, undefined, {
      onprogress: (p) => progress.push(p),
      timeout: 3_000,
      resetTimeoutOnProgress: true,
    });
    // The call outlived the client's 3 s timeout because each heartbeat reset it.
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: "text", text: "slow answer" }]);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (const [i, p] of progress.entries()) {
      expect(p.total).toBeUndefined();
      expect(p.message).toMatch(/^the run has been going for [\d.]+ s$/);
      if (i > 0) expect(p.progress).toBeGreaterThan(progress[i - 1]?.progress ?? 0);
    }
  });
});
