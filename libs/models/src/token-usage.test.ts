import { describe, expect, it } from "vitest";
import { addUsage, optionalClassesOf, sumUsage } from "./token-usage.js";

describe("addUsage", () => {
  it("sums each class on its own; a class no call reported stays absent", () => {
    expect(addUsage({ inputTokens: 1, outputTokens: 2 }, { inputTokens: 3, outputTokens: 4 })).toEqual({
      inputTokens: 4,
      outputTokens: 6,
    });
    expect(
      addUsage(
        { inputTokens: 10, outputTokens: 5, cachedInputTokens: 4 },
        { inputTokens: 20, outputTokens: 7, reasoningTokens: 3, cacheWriteInputTokens: 8 },
      ),
    ).toEqual({
      inputTokens: 30,
      outputTokens: 12,
      cachedInputTokens: 4,
      cacheWriteInputTokens: 8,
      reasoningTokens: 3,
    });
  });

  it("sums many, and none is zero input and output", () => {
    expect(sumUsage([])).toEqual({ inputTokens: 0, outputTokens: 0 });
    expect(
      sumUsage([
        { inputTokens: 1, outputTokens: 1, cachedInputTokens: 1 },
        { inputTokens: 2, outputTokens: 2, cachedInputTokens: 2 },
        { inputTokens: 3, outputTokens: 3 },
      ]),
    ).toEqual({ inputTokens: 6, outputTokens: 6, cachedInputTokens: 3 });
  });
});

describe("optionalClassesOf", () => {
  it("keeps the reported optional classes, 0 included, and drops absent or null ones", () => {
    expect(optionalClassesOf({ inputTokens: 1, cachedInputTokens: 0, reasoningTokens: 5 })).toEqual({
      cachedInputTokens: 0,
      reasoningTokens: 5,
    });
    expect(optionalClassesOf({})).toEqual({});
  });
});
