/**
 * Which OpenAI API a model is called through (docs/providers.md "OpenAI's Responses API"): Chat
 * Completions unless the model's configuration says `api: "responses"`, or, for OpenAI's own
 * endpoints (the `openai` and `azure_openai` kinds), the model is one OpenAI serves on the
 * Responses API only. That table is the pinned `openai` SDK's `ResponsesModel` names beyond its
 * `ChatModel` ones (resources/shared.d.ts), with the Codex and Pro models OpenAI's model pages
 * name "Responses API only" although the SDK's shared `ChatModel` list carries them. A dated
 * snapshot (`o3-pro-2025-06-10`) is its model's. Also the catalog entries of the ones Kiln offers
 * by default, at OpenAI's list prices.
 */

import type { OpenAIApi } from "./provider-kinds.js";

export { OPENAI_APIS, type OpenAIApi } from "./provider-kinds.js";

/** Models OpenAI serves on `POST /v1/responses` only; all of them reason (no temperature, no top_p). */
export const RESPONSES_ONLY_MODELS: readonly string[] = [
  "o1-pro",
  "o3-pro",
  "o3-deep-research",
  "o4-mini-deep-research",
  "computer-use-preview",
  "codex-mini-latest",
  "gpt-5-codex",
  "gpt-5-pro",
  "gpt-5.1-codex",
  "gpt-5.1-codex-max",
  "gpt-5.2-pro",
];

const ONLY = new Set(RESPONSES_ONLY_MODELS);
const SNAPSHOT = /-\d{4}-\d{2}-\d{2}$/;

/** Whether OpenAI serves `model` (or the model it is a dated snapshot of) on the Responses API only. */
export function isResponsesOnlyModel(model: string): boolean {
  return ONLY.has(model) || ONLY.has(model.replace(SNAPSHOT, ""));
}

/** How a provider decides: the model's own `api` first, then (OpenAI's endpoints) the table, else Chat Completions. */
export function openAIApiOf(model: string, apis: Readonly<Record<string, OpenAIApi>> = {}, table = true): OpenAIApi {
  const told = apis[model];
  if (told) return told;
  return table && isResponsesOnlyModel(model) ? "responses" : "chat_completions";
}

/**
 * Responses-only models in the default catalog (`openai/<model>`), USD per million tokens: input,
 * cached input, output (reasoning billed as output). The deep-research and computer-use models are
 * left out: they need OpenAI's hosted web-search and computer tools, which Kiln does not offer.
 */
const PRICES = [
  { model: "o3-pro", input: 20, cached: null, output: 80 },
  { model: "o1-pro", input: 150, cached: null, output: 600 },
  { model: "gpt-5-pro", input: 15, cached: null, output: 120 },
  { model: "gpt-5-codex", input: 1.25, cached: 0.125, output: 10 },
  { model: "gpt-5.1-codex", input: 1.25, cached: 0.125, output: 10 },
  { model: "codex-mini-latest", input: 1.5, cached: 0.375, output: 6 },
];

/** Catalog entries (model-catalog.ts `ModelEntry`, typed by shape to keep imports one-way). */
export const OPENAI_RESPONSES_MODELS = PRICES.map((m) => ({
  id: `openai/${m.model}`,
  provider: "openai",
  model: m.model,
  capabilities: { tools: true, jsonSchema: true, input: ["text" as const, "image" as const] },
  pricing: {
    inputPerMTokUsd: m.input,
    outputPerMTokUsd: m.output,
    ...(m.cached !== null ? { cachedInputPerMTokUsd: m.cached } : {}),
  },
}));
