/**
 * The models of an Anthropic connection: `GET {baseUrl}/v1/models?limit=1000` with `x-api-key`
 * and `anthropic-version`, answered `{data: [ModelInfo], has_more, first_id, last_id}` (the
 * official SDK's types), newest first; the next page is asked for with `after_id={last_id}` while
 * `has_more`. Retired models (listed only when asked for) are left out. A model takes images unless
 * its `capabilities` say it does not (every Claude model since Claude 3 does); a model the catalog
 * knows, a dated snapshot of one included, has its list prices.
 */
import type { ModelInfo } from "@anthropic-ai/sdk/resources/models";
import { ANTHROPIC_BASE_URL, ANTHROPIC_VERSION, anthropicErrorMessageOf } from "./anthropic-provider.js";
import { followPages, getPage, type ListedModel, listedModel, type ModelListRequest } from "./model-list.js";

/** The most Anthropic answers in one page. */
const PAGE_LIMIT = 1000;

interface ModelPage {
  data?: Partial<ModelInfo>[];
  has_more?: boolean;
  first_id?: string | null;
  last_id?: string | null;
}

function listedOf(info: Partial<ModelInfo>): ListedModel | undefined {
  if (info.type !== "model" || typeof info.id !== "string" || info.id === "" || /\s/.test(info.id)) return undefined;
  if (info.lifecycle === "retired") return undefined;
  const images = info.capabilities?.image_input?.supported !== false;
  return listedModel("anthropic", info.id, images ? ["text", "image"] : ["text"]);
}

export async function listAnthropicModels(request: ModelListRequest): Promise<ListedModel[]> {
  const base = (request.baseUrl || ANTHROPIC_BASE_URL).replace(/\/+$/, "").replace(/\/v1$/, "");
  const headers: Record<string, string> = {
    "anthropic-version": ANTHROPIC_VERSION,
    ...(request.apiKey && { "x-api-key": request.apiKey }),
  };
  return followPages(async (after) => {
    const query = new URLSearchParams({ limit: String(PAGE_LIMIT), ...(after !== undefined && { after_id: after }) });
    const body = await getPage<ModelPage | null>(
      request,
      `${base}/v1/models?${query}`,
      headers,
      anthropicErrorMessageOf,
    );
    const listed = (Array.isArray(body?.data) ? body.data : []).map((info) => info && listedOf(info));
    // A page that says more are left but names no last id cannot be followed.
    const next = body?.has_more === true && typeof body.last_id === "string" ? body.last_id : undefined;
    return { listed, next };
  });
}
