/**
 * The Bedrock models offered by default (Converse model ids), at AWS's on-demand list prices in
 * us-east-1 (USD per million tokens; other regions may differ). Claude's prompt caching reads and
 * writes have prices of their own. Typed by shape (model-catalog.ts's ModelEntry) so the catalog
 * can list them without an import circle.
 */
const PRICES = [
  { model: "amazon.nova-micro-v1:0", input: 0.035, output: 0.14, cached: 0.00875, images: false },
  { model: "amazon.nova-lite-v1:0", input: 0.06, output: 0.24, cached: 0.015, images: true },
  { model: "amazon.nova-pro-v1:0", input: 0.8, output: 3.2, cached: 0.2, images: true },
  { model: "anthropic.claude-3-5-haiku-20241022-v1:0", input: 0.8, output: 4, cached: 0.08, write: 1, images: false },
];

export const BEDROCK_MODELS = PRICES.map((m) => ({
  id: `bedrock/${m.model}`,
  provider: "bedrock",
  model: m.model,
  capabilities: {
    tools: true,
    jsonSchema: true,
    input: m.images ? ["text" as const, "image" as const] : ["text" as const],
  },
  pricing: {
    inputPerMTokUsd: m.input,
    outputPerMTokUsd: m.output,
    cachedInputPerMTokUsd: m.cached,
    ...(m.write !== undefined ? { cacheWritePerMTokUsd: m.write } : {}),
  },
}));
