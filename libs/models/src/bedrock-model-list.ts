/**
 * The models of a Bedrock connection: the control plane's ListFoundationModels,
 * `GET https://bedrock.{region}.amazonaws.com/foundation-models?byOutputModality=TEXT&byInferenceType=ON_DEMAND`,
 * signed with SigV4 (service `bedrock`) by `aws4fetch`'s signer as the Converse calls are
 * (bedrock-provider.ts; the control plane's SDK, `@aws-sdk/client-bedrock`, is not a dependency),
 * answered `{modelSummaries: [FoundationModelSummary]}` in one page. Kept: ACTIVE models that
 * answer text and take text, on demand; a model whose `inputModalities` include IMAGE takes
 * images; the catalog's models have its prices. A connection's base URL moves the list too: a
 * `bedrock-runtime.` host lists at the matching `bedrock.` host, any other (a proxy, a local
 * stand-in) at its own origin.
 */
import { AwsV4Signer } from "aws4fetch";
import { bedrockMessageOf } from "./bedrock-provider.js";
import { firstListed, getPage, type ListedModel, listedModel, type ModelListRequest } from "./model-list.js";
import { ProviderError } from "./provider.js";

/** ListFoundationModels' `FoundationModelSummary`, as far as discovery reads it. */
interface ModelSummary {
  modelId?: string;
  modelName?: string;
  providerName?: string;
  inputModalities?: string[];
  outputModalities?: string[];
  responseStreamingSupported?: boolean;
  inferenceTypesSupported?: string[];
  modelLifecycle?: { status?: string };
}

/** Where a connection's models are listed: the region's control plane, or what its base URL says. */
export function bedrockControlUrl(region: string, baseUrl?: string): string {
  if (!baseUrl) return `https://bedrock.${region}.amazonaws.com`;
  const url = new URL(baseUrl);
  url.hostname = url.hostname.replace(/^bedrock-runtime(-fips)?\./, "bedrock$1.");
  return url.origin;
}

function listedOf(m: ModelSummary): ListedModel | undefined {
  const has = (list: string[] | undefined, value: string) => Array.isArray(list) && list.includes(value);
  if (typeof m.modelId !== "string" || m.modelId === "" || /[\s/]/.test(m.modelId)) return undefined;
  if (m.modelLifecycle?.status !== "ACTIVE") return undefined;
  if (!has(m.outputModalities, "TEXT") || !has(m.inputModalities, "TEXT")) return undefined;
  if (!has(m.inferenceTypesSupported, "ON_DEMAND")) return undefined;
  return listedModel("bedrock", m.modelId, has(m.inputModalities, "IMAGE") ? ["text", "image"] : ["text"]);
}

export async function listBedrockModels(request: ModelListRequest): Promise<ListedModel[]> {
  const { region, accessKeyId, secretAccessKey, sessionToken } = request;
  if (!region || !accessKeyId || !secretAccessKey)
    throw new ProviderError("provider_error", "a bedrock connection needs region, accessKeyId and secretAccessKey", {
      provider: request.id,
      model: "",
    });
  const url = `${bedrockControlUrl(region, request.baseUrl)}/foundation-models?byOutputModality=TEXT&byInferenceType=ON_DEMAND`;
  const signed = await new AwsV4Signer({
    method: "GET",
    url,
    headers: { accept: "application/json", "user-agent": "kiln" },
    accessKeyId,
    secretAccessKey,
    sessionToken,
    service: "bedrock",
    region,
  }).sign();
  const headers = Object.fromEntries(signed.headers);
  const body = await getPage<{ modelSummaries?: ModelSummary[] } | null>(request, url, headers, bedrockMessageOf);
  const models = (Array.isArray(body?.modelSummaries) ? body.modelSummaries : []).map((m) => m && listedOf(m));
  return firstListed(models.filter((m): m is ListedModel => m !== undefined));
}
