import { bedrockReply, startBedrockStub } from "@kiln/testing/bedrock-stub";
import { geminiReply, startGeminiStub } from "@kiln/testing/gemini-stub";
import { describe, expect, it } from "vitest";
import { createProviderRegistry, type ProvidersConfig } from "./provider-registry.js";

const base: ProvidersConfig = {
  openai: {},
  compatible: [],
  defaultModel: "local/echo",
  timeoutMs: 2_000,
  maxRetries: 0,
};

describe("createProviderRegistry: the native providers", () => {
  it("lists gemini/* and bedrock/* unavailable without credentials", () => {
    const registry = createProviderRegistry(base);
    expect(registry.catalog.get("gemini/gemini-2.5-pro")).toMatchObject({
      available: false,
      pricing: { inputPerMTokUsd: 1.25, outputPerMTokUsd: 10, cachedInputPerMTokUsd: 0.31 },
    });
    expect(registry.catalog.get("bedrock/amazon.nova-lite-v1:0")?.available).toBe(false);
    expect(() => registry.resolve("gemini/gemini-2.5-flash")).toThrow(/no credentials for provider "gemini"/);
  });

  it("resolves gemini/* and bedrock/* to their providers once configured", async () => {
    const gemini = await startGeminiStub({ apiKey: "AIza-registry" });
    const credentials = { accessKeyId: "AKIDREGISTRY", secretAccessKey: "registry-secret", region: "eu-west-1" };
    const bedrock = await startBedrockStub(credentials);
    try {
      const registry = createProviderRegistry({
        ...base,
        gemini: { apiKey: "AIza-registry", baseUrl: gemini.baseUrl },
        bedrock: { ...credentials, baseUrl: bedrock.baseUrl },
      });
      gemini.script(geminiReply.text("from gemini"));
      bedrock.script(bedrockReply.text("from bedrock"));
      const messages = [{ role: "user" as const, content: "hi" }];
      expect(await registry.resolve("gemini/gemini-2.5-flash-lite").generate({ messages })).toMatchObject({
        text: "from gemini",
        provider: "gemini",
        model: "gemini-2.5-flash-lite",
      });
      expect(await registry.resolve("bedrock/amazon.nova-micro-v1:0").generate({ messages })).toMatchObject({
        text: "from bedrock",
        provider: "bedrock",
        model: "amazon.nova-micro-v1:0",
      });
    } finally {
      await gemini.close();
      await bedrock.close();
    }
  });
});
