/**
 * The Gemini models offered by default, at Google's list prices (USD per million tokens, paid
 * tier, prompts up to 200k tokens; gemini-2.5-pro costs more above that, which these prices do not
 * show). Thinking tokens are billed as output (no price of their own); cached input at the context
 * caching price. Typed by shape (model-catalog.ts's ModelEntry) so the catalog can list them
 * without an import circle.
 */
const PRICES = [
  { model: "gemini-2.5-flash", input: 0.3, output: 2.5, cached: 0.075 },
  { model: "gemini-2.5-pro", input: 1.25, output: 10, cached: 0.31 },
  { model: "gemini-2.5-flash-lite", input: 0.1, output: 0.4, cached: 0.025 },
];

export const GEMINI_MODELS = PRICES.map((m) => ({
  id: `gemini/${m.model}`,
  provider: "gemini",
  model: m.model,
  capabilities: { tools: true, jsonSchema: true, input: ["text" as const, "image" as const] },
  pricing: { inputPerMTokUsd: m.input, outputPerMTokUsd: m.output, cachedInputPerMTokUsd: m.cached },
}));
