/**
 * The provider protocols an organization's connection may name (docs/providers.md "Connections"):
 * a contract of its own, so that who validates or shows a connection (the gateway) knows the
 * kinds without loading their providers.
 */
export const PROVIDER_KINDS = [
  "openai",
  "openai_compatible",
  "azure_openai",
  "anthropic",
  "gemini",
  "bedrock",
] as const;

export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** The OpenAI APIs a model of an OpenAI-protocol kind may be called through (a model's `api`; openai-responses-models.ts). */
export const OPENAI_APIS = ["chat_completions", "responses"] as const;

export type OpenAIApi = (typeof OPENAI_APIS)[number];
