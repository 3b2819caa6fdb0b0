import { describe, expect, it } from "vitest";
import { type RunPart, runTotalsOf } from "./run-totals.js";

const part = (extra: Partial<RunPart>): RunPart => ({
  provider: "openai",
  model: "openai/gpt-4o-mini",
  usage: { inputTokens: 0, outputTokens: 0 },
  estimatedCostUsd: 0,
  toolCalls: [],
  ...extra,
});
const at = new Date(Date.UTC(2026, 11, 2));

describe("runTotalsOf", () => {
  it("sums each token class over the parts, and keeps each cost note once", () => {
    const totals = runTotalsOf(
      [
        part({
          usage: { inputTokens: 2006, outputTokens: 300, cachedInputTokens: 1920, reasoningTokens: 192 },
          estimatedCostUsd: 0.0003369,
          costNotes: ["cached_input_priced_as_input"],
        }),
        part({ usage: { inputTokens: 100, outputTokens: 10 }, estimatedCostUsd: 0.00045 }),
        part({
          usage: { inputTokens: 50, outputTokens: 5, cachedInputTokens: 40 },
          estimatedCostUsd: 0.00001,
          costNotes: ["cached_input_priced_as_input"],
        }),
      ],
      at,
      at,
    );
    expect(totals.usage).toEqual({
      inputTokens: 2156,
      outputTokens: 315,
      cachedInputTokens: 1960,
      reasoningTokens: 192,
    });
    expect(totals.estimatedCostUsd).toBeCloseTo(0.0003369 + 0.00045 + 0.00001, 15);
    expect(totals.costNotes).toEqual(["cached_input_priced_as_input"]);
  });

  it("has no cost notes and no optional classes when no part reported them", () => {
    const totals = runTotalsOf([part({ usage: { inputTokens: 3, outputTokens: 4 } })], at, at);
    expect(totals.usage).toEqual({ inputTokens: 3, outputTokens: 4 });
    expect(totals).not.toHaveProperty("costNotes");
  });
});
