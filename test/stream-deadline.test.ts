/**
 * A run cut off by the gateway's deadline (RUN_TIMEOUT_MS, distributed mode: the embedded gateway
 * calls execution in process, without one) is stored as timed out, `provider_timeout`, streamed or
 * not, and never as `cancelled`, which is for a caller that went away (test/openai-streaming.test.ts).
 */
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Distributed, startDistributed } from "./support/distributed.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

// biome-ignore lint/suspicious/noExplicitAny: stored runs are read loosely and asserted on.
type Loose = any;

const WORDS = "one two three four five six seven eight nine ten";

describe("a run past the gateway's RUN_TIMEOUT_MS (distributed mode: FerretDB, NATS)", () => {
  let stub: OpenAIStub;
  let kiln: Distributed;
  let flow: FlowResult;
  let promptId: string;

  beforeAll(async () => {
    stub = await startOpenAIStub({});
    const providers = JSON.stringify([{ id: "stub", baseUrl: stub.baseUrl, models: [{ model: "m" }] }]);
    kiln = await startDistributed({
      mongoUrl: inject("mongoUrl"),
      natsUrl: inject("natsUrl"),
      envOf: { gateway: { RUN_TIMEOUT_MS: "1000" }, execution: { OPENAI_COMPATIBLE_PROVIDERS: providers } },
    });
    flow = await runIdentityFlow(kiln.gatewayUrl, ["prompts:read", "runs:write", "runs:read"]);
    const { prompt } = await createTestClient(kiln.gatewayUrl).createPublishedPrompt(flow.token, flow.organizationId, {
      model: "stub/m",
      systemPrompt: "Count to ten.",
    });
    promptId = prompt.id;
  }, 180_000);
  afterAll(async () => {
    await kiln?.stop();
    await stub?.close();
  });

  /** The organization's runs, newest first, once `count` of them are stored. */
  async function storedRuns(count: number): Promise<Loose[]> {
    for (let i = 0; i < 100; i++) {
      const got = await call(kiln.gatewayUrl, "GET", `/api/runs?limit=10&organizationId=${flow.organizationId}`, {
        token: flow.token,
      });
      if (got.status === 200 && (got.body as Loose).data.length >= count) return (got.body as Loose).data;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`fewer than ${count} runs were stored`);
  }

  it("stores a streamed run that outlives the deadline as provider_timeout, not cancelled", async () => {
    stub.reset();
    // Ten chunks 300 ms apart: the stream would take 3 s, the deadline is 1 s.
    stub.script(stubReply.text(WORDS, { chunkDelayMs: 300 }));
    const openai = new OpenAI({ apiKey: flow.apiKey, baseURL: `${kiln.gatewayUrl}/v1`, maxRetries: 0 });
    const { data: stream, response } = await openai.chat.completions
      .create({ model: `kiln/${promptId}`, messages: [{ role: "user", content: "Go" }], stream: true })
      .withResponse();
    const runId = response.headers.get("x-kiln-run-id") ?? "";
    let received = "";
    const read = (async () => {
      for await (const chunk of stream) received += chunk.choices[0]?.delta.content ?? "";
    })();
    // The stream ends with an error event, not with the whole answer.
    await expect(read).rejects.toThrow();
    expect(received.length).toBeLessThan(WORDS.length);
    const run = (await storedRuns(1)).find((r) => r.id === runId);
    expect(run?.status).toBe("failed");
    expect(run?.error?.code).toBe("provider_timeout");
    // The provider call was abandoned with it.
    await expect.poll(() => stub.streams[0]?.closedEarly).toBe(true);
  });

  it("stores a whole-answer run that outlives the deadline as provider_timeout", async () => {
    stub.reset();
    stub.script({ ...stubReply.text(WORDS), delayMs: 3_000 });
    const got = await call(kiln.gatewayUrl, "POST", `/api/prompts/${promptId}/run`, {
      token: flow.token,
      body: { organizationId: flow.organizationId, variables: {} },
    });
    expect(got.status).toBeGreaterThanOrEqual(500);
    const [latest] = await storedRuns(2);
    expect(latest.status).toBe("failed");
    expect(latest.error.code).toBe("provider_timeout");
  });
});
