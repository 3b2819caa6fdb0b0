import { DomainError } from "@kiln/kit/errors";
import { anthropicReply, startAnthropicStub } from "@kiln/testing/anthropic-stub";
import { bedrockReply, startBedrockStub } from "@kiln/testing/bedrock-stub";
import { geminiReply, startGeminiStub } from "@kiln/testing/gemini-stub";
import { describe, expect, it } from "vitest";
import { providerOfConnection } from "./provider-factories.js";

const common = { timeoutMs: 2_000, maxRetries: 0 };
const messages = [{ role: "user" as const, content: "hi" }];

describe("provider factories: the native kinds", () => {
  it("builds an anthropic connection's provider under the connection's name, with its key", async () => {
    const stub = await startAnthropicStub({ apiKey: "sk-ant-connection" });
    try {
      const provider = providerOfConnection("anthropic", {
        ...common,
        id: "claude-team",
        apiKey: "sk-ant-connection",
        baseUrl: stub.baseUrl,
        settings: {},
      });
      stub.script(anthropicReply.text("from anthropic"));
      const result = await provider.generate({ model: "claude-haiku-4-5", messages });
      expect(result).toMatchObject({ text: "from anthropic", provider: "claude-team", model: "claude-haiku-4-5" });
      expect(stub.requests.at(-1)?.headers["x-api-key"]).toBe("sk-ant-connection");
      // The stub refuses another key with Anthropic's 401: the connection's key is the one sent.
      const wrong = providerOfConnection("anthropic", {
        ...common,
        id: "claude-team",
        apiKey: "sk-ant-other",
        baseUrl: stub.baseUrl,
        settings: {},
      });
      await expect(wrong.generate({ model: "claude-haiku-4-5", messages })).rejects.toMatchObject({ status: 401 });
    } finally {
      await stub.close();
    }
  });

  it("builds a gemini connection's provider under the connection's name, with its key", async () => {
    const gemini = await startGeminiStub({ apiKey: "AIza-connection" });
    try {
      const provider = providerOfConnection("gemini", {
        ...common,
        id: "acme",
        apiKey: "AIza-connection",
        baseUrl: gemini.baseUrl,
        settings: {},
      });
      gemini.script(geminiReply.text("from the connection"));
      const result = await provider.generate({ model: "gemini-2.5-flash-lite", messages });
      expect(provider.id).toBe("acme");
      expect(result).toMatchObject({ text: "from the connection", provider: "acme", model: "gemini-2.5-flash-lite" });
    } finally {
      await gemini.close();
    }
  });

  it("builds a bedrock connection's provider from its region and AWS credentials (signed requests)", async () => {
    const credentials = { accessKeyId: "AKIDCONNECTION", secretAccessKey: "connection-secret", region: "eu-west-1" };
    const bedrock = await startBedrockStub(credentials);
    try {
      const provider = providerOfConnection("bedrock", {
        ...common,
        id: "aws-main",
        baseUrl: bedrock.baseUrl,
        settings: credentials,
      });
      bedrock.script(bedrockReply.text("from bedrock"));
      const result = await provider.generate({ model: "amazon.nova-micro-v1:0", messages });
      expect(result).toMatchObject({ text: "from bedrock", provider: "aws-main", model: "amazon.nova-micro-v1:0" });
      // A wrong secret is refused by the stub's signature check: the settings' credentials are the ones used.
      const wrong = providerOfConnection("bedrock", {
        ...common,
        id: "aws-main",
        baseUrl: bedrock.baseUrl,
        settings: { ...credentials, secretAccessKey: "not-the-secret" },
      });
      bedrock.script(bedrockReply.text("never"));
      await expect(wrong.generate({ model: "amazon.nova-micro-v1:0", messages })).rejects.toMatchObject({
        status: 403,
      });
    } finally {
      await bedrock.close();
    }
  });

  it("refuses a bedrock connection without its credentials with failed_precondition", () => {
    const build = () => providerOfConnection("bedrock", { ...common, id: "aws", settings: { region: "us-east-1" } });
    expect(build).toThrow(DomainError);
    expect(build).toThrow(/needs region, accessKeyId and secretAccessKey/);
  });
});
