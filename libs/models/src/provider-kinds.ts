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
