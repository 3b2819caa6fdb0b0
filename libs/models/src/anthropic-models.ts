/**
 * The Claude models offered by default (`anthropic/<model>`), with Anthropic's list prices in USD
 * per million tokens: base input, output, cache hits ("cache hits & refreshes") and 5-minute cache
 * writes (what `cache_control: {type: "ephemeral"}` writes), from Anthropic's pricing page
 * (docs/providers.md "Anthropic"). Claude Opus 4.1 and Sonnet 4.5 are left out: retired on
 * Anthropic's API (the pricing page and the SDK's model list, which dropped them).
 */
/** `max_tokens` when the request sets no maxOutputTokens: Anthropic requires one on every call. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192;

const CLAUDE_MODELS = [
  { model: "claude-opus-4-8", input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  { model: "claude-opus-4-7", input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  { model: "claude-opus-4-6", input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  { model: "claude-opus-4-5", input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  { model: "claude-sonnet-4-6", input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  { model: "claude-haiku-4-5", input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
];

/** Catalog entries (model-catalog.ts `ModelEntry`, which lists them; typed there to keep imports one-way). */
export const ANTHROPIC_MODELS = CLAUDE_MODELS.map((m) => ({
  id: `anthropic/${m.model}`,
  provider: "anthropic",
  model: m.model,
  capabilities: { tools: true, jsonSchema: true, input: ["text", "image"] as ("text" | "image")[] },
  pricing: {
    inputPerMTokUsd: m.input,
    outputPerMTokUsd: m.output,
    cachedInputPerMTokUsd: m.cacheRead,
    cacheWritePerMTokUsd: m.cacheWrite,
  },
}));
