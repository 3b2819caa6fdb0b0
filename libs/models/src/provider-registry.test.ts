import { DomainError } from "@kiln/kit/errors";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ModelProvider } from "./provider.js";
import { createProviderRegistry, type ProvidersConfig } from "./provider-registry.js";

let stub: OpenAIStub;
beforeAll(async () => {
  stub = await startOpenAIStub();
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

function config(extra: Partial<ProvidersConfig> = {}): ProvidersConfig {
  return { openai: {}, compatible: [], defaultModel: "local/echo", timeoutMs: 2_000, maxRetries: 0, ...extra };
}

const OLLAMA = {
  id: "ollama",
  baseUrl: "http://127.0.0.1:1/v1",
  requiresApiKey: false,
  developerRole: false,
  models: [
    { model: "llama3.1", inputPerMTokUsd: 0, outputPerMTokUsd: 0, tools: true, jsonSchema: true },
    { model: "qwen2.5" },
  ],
};
const GROQ_WITHOUT_KEY = {
  id: "groq",
  baseUrl: "https://api.groq.com/openai/v1",
  requiresApiKey: true,
  models: [
    {
      model: "llama-3.3-70b",
      inputPerMTokUsd: 0.59,
      outputPerMTokUsd: 0.79,
      cachedInputPerMTokUsd: 0.295,
      reasoningPerMTokUsd: null,
      tools: true,
      images: true,
    },
  ],
};

async function errorOf(fn: () => unknown): Promise<DomainError> {
  try {
    await fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    return e as DomainError;
  }
  throw new Error("expected an error");
}

describe("createProviderRegistry: the catalog", () => {
  it("lists local/echo, the OpenAI models and the compatible ones, with prices, null prices and availability", () => {
    const registry = createProviderRegistry(
      config({ openai: { apiKey: "sk-x" }, compatible: [OLLAMA, GROQ_WITHOUT_KEY] }),
    );
    const models = registry.catalog.list();
    expect(models[0]).toEqual({
      id: "local/echo",
      provider: "local",
      model: "echo",
      available: true,
      capabilities: { tools: true, jsonSchema: true, input: ["text"] },
      pricing: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 },
    });
    expect(models.find((m) => m.id === "openai/gpt-4o-mini")).toMatchObject({
      available: true,
      capabilities: { input: ["text", "image"] },
      pricing: { inputPerMTokUsd: 0.15, outputPerMTokUsd: 0.6 },
    });
    expect(models.slice(-3)).toEqual([
      {
        id: "ollama/llama3.1",
        provider: "ollama",
        model: "llama3.1",
        available: true,
        capabilities: { tools: true, jsonSchema: true, input: ["text"] },
        pricing: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 },
      },
      {
        id: "ollama/qwen2.5",
        provider: "ollama",
        model: "qwen2.5",
        available: true,
        capabilities: { tools: false, jsonSchema: false, input: ["text"] },
        pricing: { inputPerMTokUsd: null, outputPerMTokUsd: null },
      },
      {
        id: "groq/llama-3.3-70b",
        provider: "groq",
        model: "llama-3.3-70b",
        available: false,
        capabilities: { tools: true, jsonSchema: false, input: ["text", "image"] },
        // A null class price is the fallback: left out, as if unset.
        pricing: { inputPerMTokUsd: 0.59, outputPerMTokUsd: 0.79, cachedInputPerMTokUsd: 0.295 },
      },
    ]);
  });

  it("lists the OpenAI models as unavailable without a key", () => {
    const models = createProviderRegistry(config()).catalog.list();
    expect(models.filter((m) => m.provider === "openai").length).toBeGreaterThan(0);
    expect(models.filter((m) => m.available).map((m) => m.id)).toEqual(["local/echo"]);
  });

  it("refuses a DEFAULT_MODEL that is not in the catalog", () => {
    expect(() => createProviderRegistry(config({ defaultModel: "openai/gpt-9" }))).toThrow(
      'DEFAULT_MODEL "openai/gpt-9" is not a model of this deployment',
    );
  });
});

describe("createProviderRegistry: resolve", () => {
  it("resolves local/echo, and the default model when none is named", async () => {
    const registry = createProviderRegistry(config());
    for (const id of ["local/echo", undefined, ""]) {
      const resolved = await registry.resolve(id);
      expect(resolved.id).toBe("local/echo");
      expect(resolved.entry.pricing).toEqual({ inputPerMTokUsd: 0, outputPerMTokUsd: 0 });
      const result = await resolved.generate({ messages: [{ role: "user", content: "hello there" }] });
      expect(result).toMatchObject({ text: "hello there", provider: "local", model: "echo" });
    }
  });

  it("refuses an unknown model with invalid_argument on the field model", async () => {
    const error = await errorOf(() => createProviderRegistry(config()).resolve("openai/gpt-9"));
    expect(error.kind).toBe("invalid_argument");
    expect(error.message).toBe('unknown model "openai/gpt-9": GET /api/models lists the models of this deployment');
    expect(error.details).toEqual([{ field: "model", issue: "is not a known model" }]);
    expect((await errorOf(() => createProviderRegistry(config()).resolve("echo"))).kind).toBe("invalid_argument");
  });

  it("refuses a model whose provider has no credentials with invalid_argument", async () => {
    const registry = createProviderRegistry(config({ compatible: [GROQ_WITHOUT_KEY] }));
    for (const id of ["openai/gpt-4o-mini", "groq/llama-3.3-70b"]) {
      const error = await errorOf(() => registry.resolve(id));
      expect(error.kind).toBe("invalid_argument");
      expect(error.message).toMatch(
        /is not available: this deployment has no credentials for provider "(openai|groq)"/,
      );
      expect(error.details).toEqual([{ field: "model", issue: "is not available in this deployment" }]);
    }
  });

  it("calls OpenAI and compatible endpoints at their configured addresses with their options", async () => {
    const registry = createProviderRegistry(
      config({
        openai: { apiKey: "sk-openai-key", baseUrl: stub.baseUrl },
        compatible: [{ ...OLLAMA, baseUrl: stub.baseUrl }],
      }),
    );
    stub.script(stubReply.text("from openai"), stubReply.text("from ollama"));
    const messages = [
      { role: "developer" as const, content: "Be brief." },
      { role: "user" as const, content: "Hi" },
    ];
    const a = await (await registry.resolve("openai/gpt-4o-mini")).generate({ messages, maxOutputTokens: 10 });
    const b = await (await registry.resolve("ollama/llama3.1")).generate({ messages, maxOutputTokens: 10 });
    expect([a.provider, a.model, a.text]).toEqual(["openai", "gpt-4o-mini", "from openai"]);
    expect([b.provider, b.model, b.text]).toEqual(["ollama", "llama3.1", "from ollama"]);
    const [toOpenAI, toOllama] = stub.requests;
    expect(toOpenAI?.body).toMatchObject({ model: "gpt-4o-mini", max_completion_tokens: 10 });
    expect(toOpenAI?.body.messages[0].role).toBe("developer");
    expect(toOpenAI?.headers.authorization).toBe("Bearer sk-openai-key");
    expect(toOllama?.body).toMatchObject({ model: "llama3.1", max_tokens: 10 });
    expect(toOllama?.body.messages[0].role).toBe("system");
    expect(toOllama?.headers).not.toHaveProperty("authorization");
  });

  it("takes given providers instead of the built-in ones, and counts them as available", async () => {
    const fake: ModelProvider = {
      id: "openai",
      generate: async (r) => ({
        text: `fake ${r.model}`,
        toolCalls: [],
        usage: { inputTokens: 1, outputTokens: 2 },
        finishReason: "stop",
        provider: "openai",
        model: r.model,
        retries: 0,
      }),
    };
    const registry = createProviderRegistry(config(), { providers: [fake] });
    expect(registry.catalog.get("openai/gpt-4o")?.available).toBe(true);
    const result = await (await registry.resolve("openai/gpt-4o")).generate({ messages: [] });
    expect(result.text).toBe("fake gpt-4o");
  });
});

describe("createProviderRegistry: MODEL_TOKENS_PER_MINUTE", () => {
  it("gives a deployment model its limit by id or by its provider's wildcard; a compatible model's own wins", async () => {
    const registry = createProviderRegistry(
      config({
        openai: { apiKey: "sk-test" },
        compatible: [{ ...OLLAMA, models: [{ model: "llama3.1", tokensPerMinute: 5 }, { model: "qwen2.5" }] }],
        tokensPerMinute: { "openai/gpt-4o": 400_000, "ollama/*": 1_000 },
      }),
    );
    expect((await registry.resolve("openai/gpt-4o")).entry.tokensPerMinute).toBe(400_000);
    expect((await registry.resolve("openai/gpt-4o-mini")).entry.tokensPerMinute).toBeUndefined();
    expect((await registry.resolve("ollama/qwen2.5")).entry.tokensPerMinute).toBe(1_000);
    expect((await registry.resolve("ollama/llama3.1")).entry.tokensPerMinute).toBe(5);
    const listed = await registry.list();
    expect(listed.find((m) => m.id === "openai/gpt-4o")?.tokensPerMinute).toBe(400_000);
    // The shared catalog entry is not changed: a registry without the variable has no limit.
    expect(
      (await createProviderRegistry(config({ openai: { apiKey: "sk-test" } })).resolve("openai/gpt-4o")).entry
        .tokensPerMinute,
    ).toBeUndefined();
  });
});
