/**
 * Cancelling an MCP tools/call (docs/mcp.md "Tools"): the official client's cancellation of a long
 * agent run reaches the execution service, which stops the run and abandons its model call long
 * before the slow model would have answered, and stores the run as cancelled.
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { createLogger } from "@kiln/kit/logger";
import { buildEmbedded } from "@kiln/launcher/embedded";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

const MODEL_LATENCY_MS = 8_000;

describe("cancelling a long agent run called over MCP", () => {
  let stub: OpenAIStub;
  let kiln: Awaited<ReturnType<typeof buildEmbedded>>;
  let base: string;
  let flow: FlowResult;
  let client: Client;

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
    const api = createTestClient(base);
    flow = await runIdentityFlow(base, ["agents:read", "runs:write", "runs:read"]);
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

    client = new Client({ name: "kiln-cancel-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${flow.apiKey}` } },
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await kiln?.close();
    await stub?.close();
  });

  it("stops the run when the client cancels the call", async () => {
    const cancel = new AbortController();
    const started = Date.now();
    const call = client.callTool({ name: "agent_slow_thinker", arguments: { topic: "tea" } }, undefined, {
      signal: cancel.signal,
      timeout: 60_000,
    });
    await eventually(async () => stub.inFlight() === 1, 5_000);
    cancel.abort("changed my mind");
    await expect(call).rejects.toThrow(/changed my mind/);

    // The model call is abandoned at once, not answered MODEL_LATENCY_MS later.
    await eventually(async () => stub.inFlight() === 0, 3_000);
    expect(Date.now() - started).toBeLessThan(MODEL_LATENCY_MS / 2);

    // The run is stored as cancelled, and stays so: nothing completes it once the model's latency has passed.
    const runs = async (query: string) => {
      const res = await fetch(`${base}/api/runs?${query}`, { headers: { authorization: `Bearer ${flow.apiKey}` } });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: { id: string; status: string; error: unknown }[] }).data;
    };
    await eventually(async () => (await runs("kind=agent&status=cancelled")).length === 1, 3_000);
    await new Promise((r) => setTimeout(r, MODEL_LATENCY_MS - (Date.now() - started) + 500));
    const [run, ...others] = await runs("kind=agent");
    expect(others).toEqual([]);
    expect(run).toMatchObject({
      status: "cancelled",
      error: { code: "cancelled", message: "the caller cancelled the run before it finished" },
    });
    const read = await fetch(`${base}/api/runs/${run?.id}`, { headers: { authorization: `Bearer ${flow.apiKey}` } });
    expect(await read.json()).toMatchObject({ id: run?.id, kind: "agent", status: "cancelled" });
    expect(stub.requests).toHaveLength(1);
  });
});
