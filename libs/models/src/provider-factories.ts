/**
 * The provider of an organization's connection (docs/providers.md "Connections"), by its kind:
 * one factory per provider protocol, given the connection's name as the provider id, its
 * credentials, endpoint and settings.
 */
import { failedPrecondition } from "@kiln/kit/errors";
import { createAnthropicProvider } from "./anthropic-provider.js";
import { createBedrockProvider } from "./bedrock-provider.js";
import { createGeminiProvider } from "./gemini-provider.js";
import type { AzureOpenAIOptions } from "./openai-endpoint.js";
import { createOpenAIProvider } from "./openai-provider.js";
import type { ModelProvider, RemoteProviderOptions } from "./provider.js";
import type { OpenAIApi, ProviderKind } from "./provider-kinds.js";

export { OPENAI_APIS, type OpenAIApi, PROVIDER_KINDS, type ProviderKind } from "./provider-kinds.js";

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
  /** bedrock: temporary credentials' session token (a secret too). */
  sessionToken?: string;
}

/**
 * What a factory gets: the common remote options (id = the connection's name), the settings, and
 * the OpenAI API of each model that names one (its `api`; the OpenAI-protocol kinds read it).
 */
export type ConnectionProviderOptions = RemoteProviderOptions & {
  settings: ConnectionSettings;
  modelApis?: Readonly<Record<string, OpenAIApi>>;
};

export type ProviderFactory = (options: ConnectionProviderOptions) => ModelProvider;

const DEFAULT_AZURE_API_VERSION = "2024-10-21";

/** One factory per kind, the deployment's own providers built by them as well (provider-registry.ts). */
const PROVIDER_FACTORIES: Record<ProviderKind, ProviderFactory> = {
  openai: (o) => createOpenAIProvider({ ...o, apis: o.modelApis }),
  // OpenAI's Responses-only table is OpenAI's: a compatible endpoint's model goes there only when it says so.
  openai_compatible: (o) =>
    createOpenAIProvider({
      ...o,
      apis: o.modelApis,
      responsesTable: false,
      developerRole: o.settings.developerRole ?? true,
      maxTokensParam: o.settings.maxTokensParam ?? "max_tokens",
    }),
  azure_openai: (o) => {
    const azure: AzureOpenAIOptions = {
      apiVersion: o.settings.apiVersion ?? DEFAULT_AZURE_API_VERSION,
      ...(o.settings.deployments && { deployments: o.settings.deployments }),
    };
    return createOpenAIProvider({ ...o, apis: o.modelApis, azure });
  },
  anthropic: (o) => createAnthropicProvider(o),
  gemini: (o) => createGeminiProvider(o),
  bedrock: (o) => {
    const { region, accessKeyId, secretAccessKey, sessionToken } = o.settings;
    // The connection rules require all three at create; a stored connection without them cannot call.
    if (!region || !accessKeyId || !secretAccessKey) {
      throw failedPrecondition("a bedrock connection needs region, accessKeyId and secretAccessKey", [
        { field: !region ? "region" : !accessKeyId ? "accessKeyId" : "secretAccessKey", issue: "is required" },
      ]);
    }
    return createBedrockProvider({ ...o, region, accessKeyId, secretAccessKey, ...(sessionToken && { sessionToken }) });
  },
};

/** The provider of a connection (or of the deployment's own configuration) of `kind`. */
export function providerOfConnection(kind: ProviderKind, options: ConnectionProviderOptions): ModelProvider {
  return PROVIDER_FACTORIES[kind](options);
}
