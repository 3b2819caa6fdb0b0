import { describe, expect, it } from "vitest";
import { costNotesOf, createModelCatalog, estimateCostUsd, OPENAI_MODELS } from "./model-catalog.js";
import { usageOf } from "./openai-wire.js";

describe("createModelCatalog", () => {
  it("marks providers with credentials available; local always is", () => {
    const catalog = createModelCatalog({ configuredProviders: ["openai"] });
    expect(catalog.get("local/echo")?.available).toBe(true);
    expect(catalog.get("openai/gpt-4o-mini")?.available).toBe(true);
    expect(createModelCatalog({ configuredProviders: [] }).get("openai/gpt-4o-mini")?.available).toBe(false);
  });

  it("appends extra models after the built-in ones, keeping the first entry of an id", () => {
    const catalog = createModelCatalog({
      configuredProviders: ["vllm"],
      extraModels: [
        {
          id: "vllm/mistral",
          provider: "vllm",
          model: "mistral",
          capabilities: { tools: false, jsonSchema: true, input: ["text"] },
          pricing: { inputPerMTokUsd: null, outputPerMTokUsd: null },
        },
        {
          id: "local/echo",
          provider: "local",
          model: "echo",
          capabilities: { tools: false, jsonSchema: false, input: ["text"] },
          pricing: { inputPerMTokUsd: 9, outputPerMTokUsd: 9 },
        },
      ],
    });
    const ids = catalog.list().map((m) => m.id);
    expect(ids[0]).toBe("local/echo");
    expect(ids.at(-1)).toBe("vllm/mistral");
    expect(ids.filter((id) => id === "local/echo")).toHaveLength(1);
    expect(catalog.get("local/echo")?.pricing.inputPerMTokUsd).toBe(0);
    expect(catalog.get("vllm/mistral")).toMatchObject({ available: true, pricing: { inputPerMTokUsd: null } });
  });
});

describe("estimateCostUsd", () => {
  it("prices tokens per million, and is null, never 0, for an unknown price", () => {
    const usage = { inputTokens: 2_000, outputTokens: 500 };
    expect(estimateCostUsd({ inputPerMTokUsd: 0.15, outputPerMTokUsd: 0.6 }, usage)).toBeCloseTo(0.0006, 10);
    expect(estimateCostUsd({ inputPerMTokUsd: 0, outputPerMTokUsd: 0 }, usage)).toBe(0);
    expect(estimateCostUsd({ inputPerMTokUsd: null, outputPerMTokUsd: 0.6 }, usage)).toBeNull();
  });
});

describe("estimateCostUsd, each token class at its own price", () => {
  const gpt4oMini = OPENAI_MODELS.find((m) => m.model === "gpt-4o-mini")?.pricing;

  it("carries OpenAI's list prices, cached input included", () => {
    const prices = Object.fromEntries(OPENAI_MODELS.map((m) => [m.model, m.pricing]));
    expect(prices).toEqual({
      "gpt-4o-mini": { inputPerMTokUsd: 0.15, outputPerMTokUsd: 0.6, cachedInputPerMTokUsd: 0.075 },
      "gpt-4o": { inputPerMTokUsd: 2.5, outputPerMTokUsd: 10, cachedInputPerMTokUsd: 1.25 },
      "gpt-4.1-mini": { inputPerMTokUsd: 0.4, outputPerMTokUsd: 1.6, cachedInputPerMTokUsd: 0.1 },
      "gpt-4.1": { inputPerMTokUsd: 2, outputPerMTokUsd: 8, cachedInputPerMTokUsd: 0.5 },
    });
  });

  it("prices an OpenAI answer whose prompt_tokens include cached_tokens and completion_tokens include reasoning_tokens", () => {
    // OpenAI's documented usage: 2006 prompt tokens of which 1920 were cached; 300 completion tokens of which 192 reasoning.
    const usage = usageOf({
      prompt_tokens: 2006,
      completion_tokens: 300,
      total_tokens: 2306,
      prompt_tokens_details: { cached_tokens: 1920 },
      completion_tokens_details: { reasoning_tokens: 192 },
    });
    expect(usage).toEqual({ inputTokens: 2006, outputTokens: 300, cachedInputTokens: 1920, reasoningTokens: 192 });
    // 86 uncached · 0.15 + 1920 cached · 0.075 + 300 output (reasoning at the output price) · 0.6, per million.
    expect(estimateCostUsd(gpt4oMini!, usage)).toBeCloseTo((86 * 0.15 + 1920 * 0.075 + 300 * 0.6) / 1e6, 15);
    expect(costNotesOf(gpt4oMini!, usage)).toEqual([]);
  });

  it("prices cache writes and reasoning at their own prices when the table has them", () => {
    const pricing = {
      inputPerMTokUsd: 3,
      outputPerMTokUsd: 15,
      cachedInputPerMTokUsd: 0.3,
      cacheWritePerMTokUsd: 3.75,
      reasoningPerMTokUsd: 20,
    };
    const usage = {
      inputTokens: 10_000,
      cachedInputTokens: 6_000,
      cacheWriteInputTokens: 2_000,
      outputTokens: 1_000,
      reasoningTokens: 400,
    };
    // 2000 uncached · 3 + 6000 · 0.3 + 2000 · 3.75 + 600 · 15 + 400 · 20 = 6000 + 1800 + 7500 + 9000 + 8000.
    expect(estimateCostUsd(pricing, usage)).toBeCloseTo(32_300 / 1e6, 15);
    expect(costNotesOf(pricing, usage)).toEqual([]);
  });

  it("falls back to the input price for cached input and cache writes, and says so for cached input", () => {
    const pricing = { inputPerMTokUsd: 1, outputPerMTokUsd: 2 };
    const usage = {
      inputTokens: 1_000,
      cachedInputTokens: 600,
      cacheWriteInputTokens: 100,
      outputTokens: 50,
      reasoningTokens: 20,
    };
    expect(estimateCostUsd(pricing, usage)).toBeCloseTo((1_000 * 1 + 50 * 2) / 1e6, 15);
    expect(costNotesOf(pricing, usage)).toEqual(["cached_input_priced_as_input"]);
    expect(costNotesOf({ ...pricing, cachedInputPerMTokUsd: null }, usage)).toEqual(["cached_input_priced_as_input"]);
    // No cached tokens: nothing was assumed.
    expect(costNotesOf(pricing, { inputTokens: 1_000, outputTokens: 50 })).toEqual([]);
    expect(costNotesOf(pricing, { inputTokens: 1_000, outputTokens: 50, cachedInputTokens: 0 })).toEqual([]);
  });

  it("stays null, never 0, when the input or output price is unknown, whatever the other prices", () => {
    const usage = { inputTokens: 1_000, cachedInputTokens: 1_000, outputTokens: 10 };
    const known = { cachedInputPerMTokUsd: 0.1, cacheWritePerMTokUsd: 1, reasoningPerMTokUsd: 1 };
    expect(estimateCostUsd({ ...known, inputPerMTokUsd: null, outputPerMTokUsd: 1 }, usage)).toBeNull();
    expect(estimateCostUsd({ ...known, inputPerMTokUsd: 1, outputPerMTokUsd: null }, usage)).toBeNull();
    expect(costNotesOf({ inputPerMTokUsd: null, outputPerMTokUsd: null }, usage)).toEqual([]);
  });
});
