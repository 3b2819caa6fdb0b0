import { ANTHROPIC_MODELS } from "./anthropic-models.js";
import { BEDROCK_MODELS } from "./bedrock-models.js";
import { GEMINI_MODELS } from "./gemini-models.js";
import { OPENAI_RESPONSES_MODELS } from "./openai-responses-models.js";
import type { TokenUsage } from "./provider.js";

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
  /**
   * Tokens (input and output) a minute the runs on it may use, counted where runs start in the
   * execution service (docs/usage.md "Token-per-minute limits"); absent: no limit.
   */
  tokensPerMinute?: number;
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

// OpenAI list prices (USD per 1M tokens: input, cached input, output) for the Chat Completions
// models offered by default. OpenAI bills reasoning at the output price and has no cache writes.
export const OPENAI_MODELS: ModelEntry[] = [
  { model: "gpt-4o-mini", input: 0.15, cached: 0.075, output: 0.6 },
  { model: "gpt-4o", input: 2.5, cached: 1.25, output: 10 },
  { model: "gpt-4.1-mini", input: 0.4, cached: 0.1, output: 1.6 },
  { model: "gpt-4.1", input: 2, cached: 0.5, output: 8 },
].map((m) => ({
  id: `openai/${m.model}`,
  provider: "openai",
  model: m.model,
  capabilities: { tools: true, jsonSchema: true, input: ["text", "image"] },
  pricing: { inputPerMTokUsd: m.input, outputPerMTokUsd: m.output, cachedInputPerMTokUsd: m.cached },
}));

/** Every built-in `openai/*` model: the Chat Completions ones, then those OpenAI serves on the Responses API only. */
export const OPENAI_BUILT_IN_MODELS: ModelEntry[] = [...OPENAI_MODELS, ...OPENAI_RESPONSES_MODELS];

/** The built-in entries of each vendor kind, for the models a connection of that kind lists (model-list.ts). */
const BUILT_IN_BY_KIND: Record<string, readonly ModelEntry[]> = {
  openai: OPENAI_BUILT_IN_MODELS,
  anthropic: ANTHROPIC_MODELS,
  gemini: GEMINI_MODELS,
  bedrock: BEDROCK_MODELS,
};

/**
 * The built-in entry of a model a provider of `kind` names, when the catalog knows it. Anthropic
 * lists dated snapshots (`claude-haiku-4-5-20251001`): a snapshot is priced as the model it is a
 * snapshot of.
 */
export function builtInModelOf(kind: string, model: string): ModelEntry | undefined {
  const entries = BUILT_IN_BY_KIND[kind] ?? [];
  const undated = kind === "anthropic" ? model.replace(/-\d{8}$/, "") : model;
  return entries.find((m) => m.model === model) ?? entries.find((m) => m.model === undated);
}

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
  const builtIn = [LOCAL_ECHO, ...OPENAI_BUILT_IN_MODELS, ...ANTHROPIC_MODELS, ...GEMINI_MODELS, ...BEDROCK_MODELS];
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
 * What a cost estimate says beside its figure: `cached_input_priced_as_input` when cached input
 * tokens were priced at the input rate because the model's cached-input price is unknown (the
 * provider likely charged less). docs/providers.md "How usage is priced".
 */
export type CostNote = "cached_input_priced_as_input";

/**
 * The estimated cost of a call in USD, each token class at its own price (docs/providers.md "How
 * usage is priced"): uncached input at the input price, cached input and cache writes at theirs
 * (else the input price), reasoning at its own (else the output price), the rest of the output at
 * the output price. null when the input or output price is unknown (never 0: api.md "Runs").
 */
export function estimateCostUsd(pricing: ModelPricing, usage: TokenUsage): number | null {
  const input = pricing.inputPerMTokUsd;
  const output = pricing.outputPerMTokUsd;
  if (input === null || output === null) return null;
  const cached = usage.cachedInputTokens ?? 0;
  const cacheWrite = usage.cacheWriteInputTokens ?? 0;
  const reasoning = usage.reasoningTokens ?? 0;
  const perMTok =
    (usage.inputTokens - cached - cacheWrite) * input +
    cached * (pricing.cachedInputPerMTokUsd ?? input) +
    cacheWrite * (pricing.cacheWritePerMTokUsd ?? input) +
    (usage.outputTokens - reasoning) * output +
    reasoning * (pricing.reasoningPerMTokUsd ?? output);
  return perMTok / 1_000_000;
}

/** The notes a cost estimate carries (CostNote); [] when every class had its own price or none was used. */
export function costNotesOf(pricing: ModelPricing, usage: TokenUsage): CostNote[] {
  const priced = pricing.inputPerMTokUsd !== null && pricing.outputPerMTokUsd !== null;
  const assumed = (pricing.cachedInputPerMTokUsd ?? null) === null && (usage.cachedInputTokens ?? 0) > 0;
  return priced && assumed ? ["cached_input_priced_as_input"] : [];
}
