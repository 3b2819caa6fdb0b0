/**
 * The connection kinds the console offers (docs/providers.md "Connections") and the presets of
 * well-known OpenAI-compatible endpoints the connection form starts from.
 */
import type { RequestBody } from "@kiln/sdk";

export type Provider = RequestBody<"createProviderConnection">["provider"];

/** Every kind the API takes, checked both ways against its document (a Record over the union). */
export const PROVIDERS: Record<Provider, string> = {
  openai: "OpenAI",
  openai_compatible: "OpenAI-compatible (Ollama, vLLM, OpenRouter, Groq…)",
  azure_openai: "Azure OpenAI",
  anthropic: "Anthropic",
  gemini: "Google Gemini",
  bedrock: "AWS Bedrock",
};

/** The kinds whose models may name the OpenAI API they are called through (a model's `api`). */
export const speaksOpenAI = (kind: Provider) =>
  kind === "openai" || kind === "openai_compatible" || kind === "azure_openai";

/** The kinds whose provider lists its models: left empty, the models are discovered (docs/providers.md "Discovery"). */
export const discovers = (kind: Provider) => kind !== "azure_openai";

/**
 * Well-known OpenAI-compatible endpoints: choosing one fills the kind, the base URL and the
 * settings it needs (the vendors' documented base URLs; local servers at their default ports).
 * Whether an endpoint knows the developer role is the vendor's: those that do not get system.
 */
export const PRESETS: Record<string, { label: string; baseUrl: string; developerRole: boolean; name: string }> = {
  openrouter: {
    label: "OpenRouter",
    baseUrl: "https://openrouter.ai/api/v1",
    developerRole: false,
    name: "openrouter",
  },
  groq: { label: "Groq", baseUrl: "https://api.groq.com/openai/v1", developerRole: false, name: "groq" },
  mistral: { label: "Mistral", baseUrl: "https://api.mistral.ai/v1", developerRole: false, name: "mistral" },
  together: { label: "Together AI", baseUrl: "https://api.together.xyz/v1", developerRole: false, name: "together" },
  deepseek: { label: "DeepSeek", baseUrl: "https://api.deepseek.com/v1", developerRole: false, name: "deepseek" },
  ollama: { label: "Ollama (local)", baseUrl: "http://localhost:11434/v1", developerRole: false, name: "ollama" },
  vllm: { label: "vLLM (local)", baseUrl: "http://localhost:8000/v1", developerRole: false, name: "vllm" },
};
