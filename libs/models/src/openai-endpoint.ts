/**
 * Where a Chat Completions call goes and how it authenticates: OpenAI and compatible endpoints
 * take `{base}/chat/completions` with `Authorization: Bearer <key>`; Azure OpenAI takes
 * `{base}/openai/deployments/{deployment}/chat/completions?api-version=…` with an `api-key`
 * header, the deployment standing for the model (docs/providers.md "Connections"). A Responses
 * API call (openai-responses-provider.ts) goes to `{base}/responses`, or on Azure to the v1 API's
 * `{base}/openai/v1/responses` (no api-version), the deployment then named by the body's `model`.
 */

/** Azure OpenAI's wire differences, as options of the OpenAI provider. */
export interface AzureOpenAIOptions {
  /** The `api-version` query parameter, e.g. "2024-10-21". */
  apiVersion: string;
  /** Deployment name per model name; a model without one is called through a deployment of its own name. */
  deployments?: Record<string, string>;
}

export const OPENAI_BASE_URL = "https://api.openai.com/v1";

export interface ChatEndpoint {
  /** The URL of one call for `model` (the model name within the provider). */
  urlFor(model: string): string;
  /** The credential header, or none for a keyless endpoint. */
  authHeaders: Record<string, string>;
}

export function chatEndpointOf(options: {
  apiKey?: string;
  baseUrl?: string;
  azure?: AzureOpenAIOptions;
}): ChatEndpoint {
  const base = (options.baseUrl ?? OPENAI_BASE_URL).replace(/\/+$/, "");
  const { azure, apiKey } = options;
  if (!azure) {
    const url = `${base}/chat/completions`;
    return { urlFor: () => url, authHeaders: apiKey ? { authorization: `Bearer ${apiKey}` } : {} };
  }
  const version = encodeURIComponent(azure.apiVersion);
  return {
    urlFor: (model) =>
      `${base}/openai/deployments/${encodeURIComponent(azure.deployments?.[model] ?? model)}/chat/completions?api-version=${version}`,
    authHeaders: apiKey ? { "api-key": apiKey } : {},
  };
}

export interface ResponsesEndpoint {
  url: string;
  /** The body's `model` for a model name: the name itself, or on Azure its deployment. */
  modelFor(model: string): string;
  authHeaders: Record<string, string>;
}

export function responsesEndpointOf(options: {
  apiKey?: string;
  baseUrl?: string;
  azure?: AzureOpenAIOptions;
}): ResponsesEndpoint {
  const base = (options.baseUrl ?? OPENAI_BASE_URL).replace(/\/+$/, "");
  const { azure, apiKey } = options;
  if (!azure) {
    return {
      url: `${base}/responses`,
      modelFor: (model) => model,
      authHeaders: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
    };
  }
  return {
    url: `${base}/openai/v1/responses`,
    modelFor: (model) => azure.deployments?.[model] ?? model,
    authHeaders: apiKey ? { "api-key": apiKey } : {},
  };
}
