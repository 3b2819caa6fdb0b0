/**
 * Sums of token usage (TokenUsage in provider.ts) over the calls of a run, its steps and its
 * evaluations: each class summed on its own; an optional class stays absent while no call reported it.
 */
import type { TokenUsage } from "./provider.js";

/** The classes a provider may not report: parts of the input and output tokens. */
export const OPTIONAL_CLASSES = ["cachedInputTokens", "cacheWriteInputTokens", "reasoningTokens"] as const;

/** `a + b`, class by class; a class reported by neither is absent from the sum (not 0). */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const sum: TokenUsage = { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
  for (const key of OPTIONAL_CLASSES) {
    if (a[key] !== undefined || b[key] !== undefined) sum[key] = (a[key] ?? 0) + (b[key] ?? 0);
  }
  return sum;
}

/** The sum of many usages; zero input and output tokens for none. */
export function sumUsage(usages: Iterable<TokenUsage>): TokenUsage {
  let sum: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  for (const u of usages) sum = addUsage(sum, u);
  return sum;
}

/** The optional classes a usage reports, for records and views that omit what is unknown. */
export function optionalClassesOf(usage: Partial<TokenUsage>): Omit<TokenUsage, "inputTokens" | "outputTokens"> {
  const out: Omit<TokenUsage, "inputTokens" | "outputTokens"> = {};
  for (const key of OPTIONAL_CLASSES) {
    const n = usage[key];
    if (n !== undefined && n !== null) out[key] = n;
  }
  return out;
}
