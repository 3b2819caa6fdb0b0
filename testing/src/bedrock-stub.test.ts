/**
 * The Bedrock stub against the official `@aws-sdk/client-bedrock-runtime` client: the SDK's own
 * SigV4 signature verifies in the stub, its Converse body passes the stub's checks, and it reads
 * what the stub answers (the JSON answer, the binary event stream, errors by x-amzn-ErrorType), so
 * the stub's wire is Bedrock's as the SDK knows it.
 */

import { Sha256 } from "@aws-crypto/sha256-js";
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  ThrottlingException,
} from "@aws-sdk/client-bedrock-runtime";
import { SignatureV4 } from "@smithy/signature-v4";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type BedrockStub, bedrockReply, startBedrockStub } from "./bedrock-stub.js";

const CREDENTIALS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
let stub: BedrockStub;

beforeAll(async () => {
  stub = await startBedrockStub({ ...CREDENTIALS, region: "us-east-1" });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

const client = (credentials = CREDENTIALS) =>
  new BedrockRuntimeClient({ region: "us-east-1", endpoint: stub.baseUrl, credentials, maxAttempts: 1 });
const MODEL = "amazon.nova-lite-v1:0";

describe("the Bedrock stub, read by @aws-sdk/client-bedrock-runtime", () => {
  it("verifies the SDK's signature and answers Converse with text and usage", async () => {
    stub.script(bedrockReply.text("Sunny.", { usage: { inputTokens: 10, outputTokens: 2, cacheReadInputTokens: 5 } }));
    const answer = await client().send(
      new ConverseCommand({
        modelId: MODEL,
        system: [{ text: "Be terse." }],
        messages: [{ role: "user", content: [{ text: "Weather?" }] }],
        inferenceConfig: { maxTokens: 50, temperature: 0.1 },
      }),
    );
    expect(answer.output?.message?.content).toEqual([{ text: "Sunny." }]);
    expect(answer.stopReason).toBe("end_turn");
    expect(answer.usage).toMatchObject({ inputTokens: 10, outputTokens: 2, cacheReadInputTokens: 5, totalTokens: 17 });
    expect(stub.requests[0]?.path).toBe(`/model/${MODEL}/converse`);
  });

  it("streams event-stream frames the SDK decodes: text, a tool call's input, stop reason, usage", async () => {
    stub.script(
      bedrockReply.toolUses([{ toolUseId: "tu-1", name: "lookup", input: { city: "Paris" } }], { text: "Checking." }),
    );
    const streamed = await client().send(
      new ConverseStreamCommand({
        modelId: MODEL,
        messages: [{ role: "user", content: [{ text: "Paris?" }] }],
        toolConfig: { tools: [{ toolSpec: { name: "lookup", inputSchema: { json: { type: "object" } } } }] },
      }),
    );
    const events: string[] = [];
    let input = "";
    for await (const event of streamed.stream ?? []) {
      events.push(Object.keys(event)[0] ?? "");
      input += event.contentBlockDelta?.delta?.toolUse?.input ?? "";
      if (event.messageStop) expect(event.messageStop.stopReason).toBe("tool_use");
      if (event.metadata) expect(event.metadata.usage?.outputTokens).toBeGreaterThan(0);
    }
    expect(events).toEqual([
      "messageStart",
      "contentBlockDelta",
      "contentBlockStop",
      "contentBlockStart",
      "contentBlockDelta",
      "contentBlockDelta",
      "contentBlockStop",
      "messageStop",
      "metadata",
    ]);
    expect(JSON.parse(input)).toEqual({ city: "Paris" });
  });

  it("fails as Bedrock does: a wrong secret, a refused body, throttling", async () => {
    const wrong = await client({ ...CREDENTIALS, secretAccessKey: "not-the-secret" })
      .send(new ConverseCommand({ modelId: MODEL, messages: [{ role: "user", content: [{ text: "x" }] }] }))
      .catch((e) => e);
    expect(wrong.name).toBe("InvalidSignatureException");
    expect(wrong.$metadata.httpStatusCode).toBe(403);
    const refused = await client()
      .send(new ConverseCommand({ modelId: MODEL, messages: [{ role: "assistant", content: [{ text: "x" }] }] }))
      .catch((e) => e);
    expect(refused.name).toBe("ValidationException");
    stub.script(bedrockReply.throttled());
    const throttled = await client()
      .send(new ConverseCommand({ modelId: MODEL, messages: [{ role: "user", content: [{ text: "x" }] }] }))
      .catch((e) => e);
    expect(throttled).toBeInstanceOf(ThrottlingException);
    expect(throttled.$metadata.httpStatusCode).toBe(429);
  });

  it("lists foundation models to a request the SDK's signer signed, the query covered by the signature", async () => {
    const signed = async (query: Record<string, string>, secretAccessKey = CREDENTIALS.secretAccessKey) => {
      const url = new URL(stub.baseUrl);
      const request = await new SignatureV4({
        credentials: { ...CREDENTIALS, secretAccessKey },
        region: "us-east-1",
        service: "bedrock",
        sha256: Sha256,
      }).sign({
        method: "GET",
        protocol: url.protocol,
        hostname: url.hostname,
        port: Number(url.port),
        path: "/foundation-models",
        query,
        headers: { host: url.host },
      });
      return request.headers;
    };
    const query = { byOutputModality: "TEXT", byInferenceType: "ON_DEMAND" };
    const listed = await fetch(`${stub.baseUrl}/foundation-models?${new URLSearchParams(query)}`, {
      headers: await signed(query),
    });
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as { modelSummaries: { modelId: string; modelLifecycle: { status: string } }[] };
    const ids = body.modelSummaries.map((m) => m.modelId);
    expect(ids).toContain("amazon.nova-lite-v1:0");
    // Embeddings answer no text; an inference-profile-only model is not on demand.
    expect(ids).not.toContain("amazon.titan-embed-text-v2:0");
    expect(ids).not.toContain("anthropic.claude-sonnet-4-20250514-v1:0");
    // A query other than the one signed does not verify.
    const tampered = await fetch(`${stub.baseUrl}/foundation-models?byOutputModality=IMAGE`, {
      headers: await signed(query),
    });
    expect(tampered.status).toBe(403);
    expect(tampered.headers.get("x-amzn-errortype")).toMatch(/^InvalidSignatureException/);
    const wrong = await fetch(`${stub.baseUrl}/foundation-models`, { headers: await signed({}, "not-the-secret") });
    expect(wrong.status).toBe(403);
    const invalid = await fetch(`${stub.baseUrl}/foundation-models?byOutputModality=SOUND`, {
      headers: await signed({ byOutputModality: "SOUND" }),
    });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get("x-amzn-errortype")).toMatch(/^ValidationException/);
  });
});
