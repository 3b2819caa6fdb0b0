import { ANTHROPIC_MODELS } from "./anthropic-models.js";
import { BEDROCK_MODELS } from "./bedrock-models.js";
import { GEMINI_MODELS } from "./gemini-models.js";

export type ModelInput = "text" | "image";

/** A model the platform can run, with the price used to estimate run costs (USD per million tokens). */
export interface ModelEntry {
  id: string;
  provider: string;
  model: string;
  /** `input`: what user messages may carry, "text" and, for a model that takes images, "image". */
  capabilities: { tools: boolean; jsonSchema: boolean; input: ModelInput[] };
  /** null when the price is unknown: costs are then null, never 0 (api.md "Runs"). */
  pricing: ModelPricing;
}

/**
 * USD per million tokens of each token class (TokenUsage in providers/provider.ts). The input and
 * output prices are required for a cost; the others are optional: cached input and cache writes
 * fall back to the input price, reasoning to the output price (a fallback for cached input is
 * said on the run, since providers charge less for it).
 */
export interface ModelPricing {
  inputPerMTokUsd: number | null;
  outputPerMTokUsd: number | null;
  cachedInputPerMTokUsd?: number | null;
  cacheWritePerMTokUsd?: number | null;
  reasoningPerMTokUsd?: number | null;
}

export interface CatalogModel extends ModelEntry {
  /** Whether this deployment has credentials for the provider. */
  available: boolean;
}

/** The built-in deterministic model: always available, free (api.md "Identity", local/echo). */
export const LOCAL_ECHO: ModelEntry = {
  id: "local/echo",
  provider: "local",
  model: "echo",
  capabilities: { tools: true, jsonSchema: true, input: ["text"] },
  pricing: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 },
};

// OpenAI list prices (USD per 1M tokens) for the Chat Completions models offered by default.
export const OPENAI_MODELS: ModelEntry[] = [
  { model: "gpt-4o-mini", input: 0.15, output: 0.6 },
  { model: "gpt-4o", input: 2.5, output: 10 },
  { model: "gpt-4.1-mini", input: 0.4, output: 1.6 },
  { model: "gpt-4.1", input: 2, output: 8 },
].map((m) => ({
  id: `openai/${m.model}`,
  provider: "openai",
  model: m.model,
  capabilities: { tools: true, jsonSchema: true, input: ["text", "image"] },
  pricing: { inputPerMTokUsd: m.input, outputPerMTokUsd: m.output },
}));

export interface ModelCatalogOptions {
  /** Providers this deployment holds credentials for, e.g. ["openai"]; "local" always is. */
  configuredProviders: string[];
  /** Models of configured OpenAI-compatible providers, listed after the built-in ones. */
  extraModels?: ModelEntry[];
}

/** local/echo, the built-in OpenAI, Anthropic, Gemini and Bedrock models, then `extraModels`; an id listed twice keeps its first entry. */
export function createModelCatalog(options: ModelCatalogOptions) {
  const configured = new Set(["local", ...options.configuredProviders]);
  const byId = new Map<string, CatalogModel>();
  const builtIn = [LOCAL_ECHO, ...OPENAI_MODELS, ...ANTHROPIC_MODELS, ...GEMINI_MODELS, ...BEDROCK_MODELS];
  for (const m of [...builtIn, ...(options.extraModels ?? [])]) {
    if (!byId.has(m.id)) byId.set(m.id, { ...m, available: configured.has(m.provider) });
  }
  const models = [...byId.values()];
  return {
    list: (): CatalogModel[] => models,
    get: (id: string): CatalogModel | undefined => byId.get(id),
  };
}

export type ModelCatalog = ReturnType<typeof createModelCatalog>;

/**
 * The estimated cost of a call in USD at the given prices; null when a price is unknown (never 0
 * for an unknown price: api.md "Runs").
 */
export function estimateCostUsd(
  pricing: ModelEntry["pricing"],
  usage: { inputTokens: number; outputTokens: number },
): number | null {
  if (pricing.inputPerMTokUsd === null || pricing.outputPerMTokUsd === null) return null;
  return (usage.inputTokens * pricing.inputPerMTokUsd + usage.outputTokens * pricing.outputPerMTokUsd) / 1_000_000;
}
