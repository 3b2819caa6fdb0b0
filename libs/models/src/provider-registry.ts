/**
 * Which models this deployment runs and who runs them: resolves "<provider>/<model>" ids to a
 * provider and the catalog entry (capabilities, prices), and lists the catalog for
 * GET /api/models. Built from ProvidersConfig (config.ts parses it from the environment). A layer
 * per organization (`organizations`) adds that organization's provider connections, "<connection
 * name>/<model>", which no other organization sees (docs/providers.md "Connections").
 */
import { invalidArgument } from "@kiln/kit/errors";
import { createCallLimiter } from "./call-limiter.js";
import { createLocalEchoProvider } from "./local-echo.js";
import { type CatalogModel, createModelCatalog, type ModelCatalog, type ModelEntry } from "./model-catalog.js";
import type { OpenAIApi } from "./openai-responses-models.js";
import type { ModelProvider, ModelRequest, ModelResult } from "./provider.js";
import { providerOfConnection } from "./provider-factories.js";

export interface CompatibleModelConfig {
  /** The model name the endpoint knows ("llama3.1"); the catalog id is "<provider id>/<model>". */
  model: string;
  /** USD per million tokens; absent = unknown price (run costs are then null, never 0). */
  inputPerMTokUsd?: number | null;
  outputPerMTokUsd?: number | null;
  /** The other classes' prices (ModelPricing); absent = the input (cached, cache write) or output (reasoning) price. */
  cachedInputPerMTokUsd?: number | null;
  cacheWritePerMTokUsd?: number | null;
  reasoningPerMTokUsd?: number | null;
  /** Capabilities the endpoint has for this model; default false. */
  tools?: boolean;
  jsonSchema?: boolean;
  /** Whether it takes image parts in user messages (capabilities.input "image"). */
  images?: boolean;
  /** The OpenAI API it is called through; default "chat_completions" (docs/providers.md "OpenAI's Responses API"). */
  api?: OpenAIApi;
  /** Tokens a minute every organization's runs on it may use together; absent: no limit. */
  tokensPerMinute?: number;
}

/** An OpenAI-compatible endpoint (Ollama, vLLM, LiteLLM, Azure-compatible gateways...). */
export interface CompatibleProviderConfig {
  /** Lower-case id, the prefix of its model ids; not "local" or "openai". */
  id: string;
  /** e.g. "http://127.0.0.1:11434/v1". */
  baseUrl: string;
  /** The key, already read from `apiKeyEnv` when configured so. */
  apiKey?: string;
  /** False for keyless endpoints; true when a key was configured (directly or by apiKeyEnv). */
  requiresApiKey: boolean;
  /** Whether the endpoint knows the "developer" role; default true. */
  developerRole?: boolean;
  /** Default "max_tokens", which compatible servers know best. */
  maxTokensParam?: "max_completion_tokens" | "max_tokens";
  models: CompatibleModelConfig[];
}

export interface ProvidersConfig {
  openai: { apiKey?: string; baseUrl?: string };
  /** Anthropic's Messages API: a key makes `anthropic/*` available (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL). */
  anthropic?: { apiKey?: string; baseUrl?: string };
  compatible: CompatibleProviderConfig[];
  /** Google Gemini (GEMINI_API_KEY, GEMINI_BASE_URL): `gemini/*` is available when a key is set. */
  gemini?: { apiKey?: string; baseUrl?: string };
  /** AWS Bedrock (BEDROCK_REGION and the AWS credentials): `bedrock/*` is available when set. */
  bedrock?: { region: string; accessKeyId: string; secretAccessKey: string; sessionToken?: string; baseUrl?: string };
  /** Used when neither the run request nor the version names a model; "local/echo" by default. */
  defaultModel: string;
  /** Default deadline of one provider call, retries included. */
  timeoutMs: number;
  /** Retries after the first attempt on 429/5xx/connection failures. */
  maxRetries: number;
  /** Calls at once per "<provider>/<model>" or "<provider>/*" in this process (MODEL_CONCURRENCY); none: no cap. */
  concurrency?: Record<string, number>;
  /**
   * Tokens a minute per deployment model, by "<provider>/<model>" or "<provider>/*"
   * (MODEL_TOKENS_PER_MINUTE): a model's entry carries it unless its own configuration set one.
   */
  tokensPerMinute?: Record<string, number>;
}

export interface ProviderRegistryOptions {
  /** The fetch OpenAI-protocol providers use (default node:http's, see http-fetch.ts). */
  fetch?: typeof fetch;
  /**
   * Providers that replace the built-in ones of the same id (tests: a fake "openai"); a provider
   * given here counts as available.
   */
  providers?: ModelProvider[];
  /** More catalog entries, for the providers above. */
  models?: ModelEntry[];
  /** An organization's own models and providers (its provider connections); none: deployment models only. */
  organizations?: (organizationId: string) => Promise<OrganizationModels>;
}

/** A model of an organization's provider connection. */
export interface ConnectionModel extends CatalogModel {
  connectionId: string;
}

/** An organization's provider connections as the registry resolves them (the execution service reads and caches them). */
export interface OrganizationModels {
  models: ConnectionModel[];
  /** The provider of the connection named `name`; throws a DomainError when it cannot be called in this build. */
  providerOf(name: string): ModelProvider;
}

/** Whose models: an organization sees the deployment's and its own connections'. */
export interface ModelScope {
  organizationId: string;
}

/** A model ready to call: the catalog entry (prices, capabilities) and its provider. */
export interface ResolvedModel {
  /** "<provider>/<model>". */
  id: string;
  /** A connection's model carries its `connectionId`. */
  entry: CatalogModel & { connectionId?: string };
  provider: ModelProvider;
  /** `provider.generate` with `model` filled in. */
  generate(request: Omit<ModelRequest, "model">): Promise<ModelResult>;
}

export interface ProviderRegistry {
  /** The catalog for GET /api/models: every model, `available` when its provider has credentials. */
  catalog: ModelCatalog;
  defaultModel: string;
  /**
   * The model of a run: `modelId` (the request's, else the version's), or the default model when
   * it is undefined or "". The deployment's models first, then (with `scope`) the organization's
   * connections. Rejects with invalid_argument (400, field "model") for an unknown model or one
   * whose provider has no credentials here (api.md "Model resolution"), failed_precondition for a
   * connection whose provider this build cannot call.
   */
  resolve(modelId?: string, scope?: ModelScope): Promise<ResolvedModel>;
  /** The catalog and, with `scope`, the organization's connection models after it. */
  list(scope?: ModelScope): Promise<(CatalogModel & { connectionId?: string })[]>;
}

export function createProviderRegistry(
  config: ProvidersConfig,
  options: ProviderRegistryOptions = {},
): ProviderRegistry {
  const limiter = createCallLimiter(config.concurrency ?? {});
  const providers = new Map<string, ModelProvider>();
  providers.set("local", createLocalEchoProvider());
  const common = { timeoutMs: config.timeoutMs, maxRetries: config.maxRetries, fetch: options.fetch };
  // The deployment's providers are built by the connections' factories (provider-factories.ts).
  if (config.openai.apiKey) {
    const { apiKey, baseUrl } = config.openai;
    providers.set("openai", providerOfConnection("openai", { id: "openai", apiKey, baseUrl, ...common, settings: {} }));
  }
  for (const id of ["anthropic", "gemini"] as const) {
    const keyed = config[id];
    if (!keyed?.apiKey) continue;
    providers.set(
      id,
      providerOfConnection(id, { id, apiKey: keyed.apiKey, baseUrl: keyed.baseUrl, ...common, settings: {} }),
    );
  }
  if (config.bedrock) {
    const { baseUrl, ...settings } = config.bedrock;
    providers.set("bedrock", providerOfConnection("bedrock", { id: "bedrock", baseUrl, ...common, settings }));
  }
  const extraModels: ModelEntry[] = [];
  for (const p of config.compatible) {
    extraModels.push(...p.models.map((m) => compatibleEntry(p.id, m)));
    if (p.requiresApiKey && !p.apiKey) continue;
    const settings = { developerRole: p.developerRole, maxTokensParam: p.maxTokensParam };
    providers.set(
      p.id,
      providerOfConnection("openai_compatible", {
        id: p.id,
        apiKey: p.apiKey,
        baseUrl: p.baseUrl,
        ...common,
        settings,
        modelApis: modelApisOf(p.models),
      }),
    );
  }
  for (const p of options.providers ?? []) providers.set(p.id, p);
  extraModels.push(...(options.models ?? []));

  const catalog = createModelCatalog({ configuredProviders: [...providers.keys()], extraModels });
  if (!catalog.get(config.defaultModel)) {
    throw new Error(`invalid configuration: DEFAULT_MODEL "${config.defaultModel}" is not a model of this deployment`);
  }

  // Each entry with its MODEL_TOKENS_PER_MINUTE limit, made once per model (the catalog's entries are shared).
  const tpm = config.tokensPerMinute ?? {};
  const limited = new Map<string, CatalogModel>();
  const withLimit = (entry: CatalogModel): CatalogModel => {
    const limit = tpm[entry.id] ?? tpm[`${entry.provider}/*`];
    if (limit === undefined || entry.tokensPerMinute !== undefined) return entry;
    let made = limited.get(entry.id);
    if (!made) {
      made = { ...entry, tokensPerMinute: limit };
      limited.set(entry.id, made);
    }
    return made;
  };

  const unknown = (id: string) =>
    invalidArgument(`unknown model "${id}": GET /api/models lists the models of this deployment`, [
      { field: "model", issue: "is not a known model" },
    ]);

  /** A model of the organization's connections; the deployment's own ids never reach here. */
  async function resolveConnectionModel(id: string, scope: ModelScope | undefined): Promise<ResolvedModel> {
    if (!scope || !options.organizations) throw unknown(id);
    const own = await options.organizations(scope.organizationId);
    const entry = own.models.find((m) => m.id === id);
    if (!entry) throw unknown(id);
    const provider = own.providerOf(entry.provider);
    // MODEL_CONCURRENCY names the deployment's models: a connection's calls are not capped by it.
    return {
      id,
      entry,
      provider,
      generate: (request) => provider.generate({ ...request, model: entry.model }),
    };
  }

  return {
    catalog,
    defaultModel: config.defaultModel,
    async list(scope) {
      const own = catalog.list().map(withLimit);
      if (!scope || !options.organizations) return own;
      return [...own, ...(await options.organizations(scope.organizationId)).models];
    },
    async resolve(modelId, scope) {
      const id = modelId || config.defaultModel;
      const found = catalog.get(id);
      if (!found) return resolveConnectionModel(id, scope);
      const entry = withLimit(found);
      const provider = entry.available ? providers.get(entry.provider) : undefined;
      if (!provider) {
        throw invalidArgument(
          `model "${id}" is not available: this deployment has no credentials for provider "${entry.provider}"`,
          [{ field: "model", issue: "is not available in this deployment" }],
        );
      }
      return {
        id,
        entry,
        provider,
        generate: (request) =>
          limiter.run(id, request.signal, () => provider.generate({ ...request, model: entry.model })),
      };
    },
  };
}

/** The models that name their OpenAI API, by model name. */
export function modelApisOf(models: readonly { model: string; api?: OpenAIApi | null }[]): Record<string, OpenAIApi> {
  return Object.fromEntries(models.flatMap((m) => (m.api ? [[m.model, m.api]] : [])));
}

function compatibleEntry(provider: string, m: CompatibleModelConfig): ModelEntry {
  return {
    id: `${provider}/${m.model}`,
    provider,
    model: m.model,
    capabilities: {
      tools: m.tools ?? false,
      jsonSchema: m.jsonSchema ?? false,
      input: m.images ? ["text", "image"] : ["text"],
    },
    pricing: {
      inputPerMTokUsd: m.inputPerMTokUsd ?? null,
      outputPerMTokUsd: m.outputPerMTokUsd ?? null,
      ...(m.cachedInputPerMTokUsd != null ? { cachedInputPerMTokUsd: m.cachedInputPerMTokUsd } : {}),
      ...(m.cacheWritePerMTokUsd != null ? { cacheWritePerMTokUsd: m.cacheWritePerMTokUsd } : {}),
      ...(m.reasoningPerMTokUsd != null ? { reasoningPerMTokUsd: m.reasoningPerMTokUsd } : {}),
    },
    ...(m.tokensPerMinute !== undefined && { tokensPerMinute: m.tokensPerMinute }),
  };
}
