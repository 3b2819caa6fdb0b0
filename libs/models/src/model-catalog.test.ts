import { describe, expect, it } from "vitest";
import { createModelCatalog, estimateCostUsd } from "./model-catalog.js";

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
