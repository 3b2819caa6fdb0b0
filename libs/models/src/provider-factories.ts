/**
 * The provider of an organization's connection (docs/providers.md "Connections"), by its kind:
 * one factory per provider protocol, given the connection's name as the provider id, its
 * credentials, endpoint and settings. A kind without a factory in this build is refused with
 * failed_precondition when a connection of it is called or tested.
 */
import { failedPrecondition } from "@kiln/kit/errors";
import { createAnthropicProvider } from "./anthropic-provider.js";
import { createBedrockProvider } from "./bedrock-provider.js";
import { createGeminiProvider } from "./gemini-provider.js";
import type { AzureOpenAIOptions } from "./openai-endpoint.js";
import { createOpenAIProvider } from "./openai-provider.js";
import type { ModelProvider, RemoteProviderOptions } from "./provider.js";

export const PROVIDER_KINDS = [
  "openai",
  "openai_compatible",
  "azure_openai",
  "anthropic",
  "gemini",
  "bedrock",
] as const;

export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** A connection's settings as the factories take them; what a kind does not read is absent. */
export interface ConnectionSettings {
  /** openai_compatible: whether the endpoint knows the "developer" role (default true). */
  developerRole?: boolean;
  /** openai_compatible: where maxOutputTokens goes (default "max_tokens"). */
  maxTokensParam?: "max_completion_tokens" | "max_tokens";
  /** azure_openai: `api-version` and the deployment of each model. */
  apiVersion?: string;
  deployments?: Record<string, string>;
  /** bedrock: the region and the AWS credentials (the secret access key is a secret like apiKey). */
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
}

/** What a factory gets: the common remote options (id = the connection's name) and the settings. */
export type ConnectionProviderOptions = RemoteProviderOptions & { settings: ConnectionSettings };

export type ProviderFactory = (options: ConnectionProviderOptions) => ModelProvider;

const DEFAULT_AZURE_API_VERSION = "2024-10-21";

/** The factories of this build: every kind has one. */
export const PROVIDER_FACTORIES: Partial<Record<ProviderKind, ProviderFactory>> = {
  openai: (o) => createOpenAIProvider(o),
  openai_compatible: (o) =>
    createOpenAIProvider({
      ...o,
      developerRole: o.settings.developerRole ?? true,
      maxTokensParam: o.settings.maxTokensParam ?? "max_tokens",
    }),
  azure_openai: (o) => {
    const azure: AzureOpenAIOptions = {
      apiVersion: o.settings.apiVersion ?? DEFAULT_AZURE_API_VERSION,
      ...(o.settings.deployments && { deployments: o.settings.deployments }),
    };
    return createOpenAIProvider({ ...o, azure });
  },
  anthropic: (o) => createAnthropicProvider(o),
  gemini: (o) => createGeminiProvider(o),
  bedrock: (o) => {
    const { region, accessKeyId, secretAccessKey } = o.settings;
    // The connection rules require all three at create; a stored connection without them cannot call.
    if (!region || !accessKeyId || !secretAccessKey) {
      throw failedPrecondition("a bedrock connection needs region, accessKeyId and secretAccessKey", [
        { field: !region ? "region" : !accessKeyId ? "accessKeyId" : "secretAccessKey", issue: "is required" },
      ]);
    }
    return createBedrockProvider({ ...o, region, accessKeyId, secretAccessKey });
  },
};

/** Whether this build can call a connection of `kind`. */
export const isSupportedKind = (kind: ProviderKind): boolean => PROVIDER_FACTORIES[kind] !== undefined;

/** The provider of a connection; failed_precondition for a kind this build has no factory for. */
export function providerOfConnection(kind: ProviderKind, options: ConnectionProviderOptions): ModelProvider {
  const factory = PROVIDER_FACTORIES[kind];
  if (!factory) {
    throw failedPrecondition(`provider "${kind}" is not supported in this build`, [
      { field: "provider", issue: "is not supported in this build" },
    ]);
  }
  return factory(options);
}
