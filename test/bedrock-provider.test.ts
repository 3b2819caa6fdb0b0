/**
 * A prompt on `bedrock/amazon.nova-lite-v1:0` through the gateway: the embedded platform configured
 * with BEDROCK_REGION, the AWS credentials and BEDROCK_BASE_URL (the Bedrock stub, which verifies
 * every SigV4 signature), a published prompt run over the REST API, and what Bedrock received, what
 * the run recorded and what it cost (docs/providers.md "Bedrock").
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { type BedrockStub, bedrockReply, startBedrockStub } from "@kiln/testing/bedrock-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

const CREDENTIALS = { accessKeyId: "AKIDINTEGRATION", secretAccessKey: "integration-secret-key", region: "us-west-2" };

describe("a prompt run on bedrock/* through the gateway", () => {
  let stub: BedrockStub;
  let kiln: EmbeddedKiln;
  let base: string;
  let flow: FlowResult;

  beforeAll(async () => {
    stub = await startBedrockStub(CREDENTIALS);
    const providers = loadProvidersConfig({
      BEDROCK_REGION: CREDENTIALS.region,
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      BEDROCK_BASE_URL: stub.baseUrl,
      PROVIDER_MAX_RETRIES: "1",
    });
    const started = await startEmbedded({ providers });
    kiln = started.kiln;
    base = started.baseUrl;
    flow = await runIdentityFlow(base, ["prompts:read", "runs:write"]);
  });
  afterAll(async () => {
    await kiln?.close();
    await stub?.close();
  });

  it("runs the prompt on Bedrock, retrying its throttling, and records usage and cost", async () => {
    const api = createTestClient(base);
    const { prompt } = await api.createPublishedPrompt(flow.token, flow.organizationId, {
      model: "bedrock/amazon.nova-lite-v1:0",
      systemPrompt: "Greet {{name}} briefly.",
      variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    });
    stub.script(
      bedrockReply.throttled(),
      bedrockReply.text("Hello, Ada!", { usage: { inputTokens: 1_000_000, outputTokens: 500_000 } }),
    );
    const run = await api.post<Record<string, unknown>>(
      `/api/prompts/${prompt.id}/run`,
      { organizationId: flow.organizationId, variables: { name: "Ada" } },
      { token: flow.apiKey },
    );
    expect(run.status, run.text).toBe(201);
    expect(run.body.error).toBeUndefined();
    expect(run.body).toMatchObject({
      status: "succeeded",
      provider: "bedrock",
      output: { text: "Hello, Ada!" },
      usage: { inputTokens: 1_000_000, outputTokens: 500_000 },
    });
    // 1M input at 0.06 + 0.5M output at 0.24 USD per million.
    expect(run.body.estimatedCostUsd).toBeCloseTo(0.18, 6);
    expect(stub.requests).toHaveLength(2);
    const sent = stub.requests[1];
    expect(sent?.rawPath).toBe("/model/amazon.nova-lite-v1%3A0/converse");
    expect(sent?.headers.authorization).toContain("/us-west-2/bedrock/aws4_request");
    expect(sent?.body.messages).toEqual([{ role: "user", content: [{ text: "Greet Ada briefly." }] }]);
  });
});
