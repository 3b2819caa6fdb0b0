/**
 * The models of a Gemini connection: `GET {baseUrl}/v1beta/models?pageSize=1000` with
 * `x-goog-api-key`, answered `{models: [Model], nextPageToken}` (the REST resource: `name:
 * "models/…"`, `supportedGenerationMethods`; the `@google/genai` SDK renames the latter
 * `supportedActions`, so the wire shape is written here), the next page asked for with
 * `pageToken`. Only models that answer `generateContent` are kept, speech models (`…-tts`, audio
 * out) left out; the id is the name without `models/`. Gemini models take images (Google's models
 * are multimodal; others served there, Gemma, are taken as text only); the catalog's models have
 * its prices.
 */
import { GEMINI_BASE_URL } from "./gemini-provider.js";
import { followPages, getPage, type ListedModel, listedModel, type ModelListRequest } from "./model-list.js";

/** The most the API answers in one page. */
const PAGE_SIZE = 1000;

/** The REST `Model` resource, as far as discovery reads it. */
interface GeminiModel {
  name?: string;
  baseModelId?: string;
  displayName?: string;
  inputTokenLimit?: number;
  outputTokenLimit?: number;
  supportedGenerationMethods?: string[];
  thinking?: boolean;
}

function listedOf(m: GeminiModel): ListedModel | undefined {
  if (typeof m.name !== "string" || !m.name.startsWith("models/")) return undefined;
  if (!Array.isArray(m.supportedGenerationMethods) || !m.supportedGenerationMethods.includes("generateContent"))
    return undefined;
  const id = m.name.slice("models/".length);
  if (id === "" || /[\s/]/.test(id) || /-tts\b/.test(id)) return undefined;
  return listedModel("gemini", id, id.startsWith("gemini-") ? ["text", "image"] : ["text"]);
}

export async function listGeminiModels(request: ModelListRequest): Promise<ListedModel[]> {
  const base = `${(request.baseUrl || GEMINI_BASE_URL).replace(/\/+$/, "")}/v1beta/models`;
  const headers: Record<string, string> = request.apiKey ? { "x-goog-api-key": request.apiKey } : {};
  return followPages(async (token) => {
    const query = new URLSearchParams({
      pageSize: String(PAGE_SIZE),
      ...(token !== undefined && { pageToken: token }),
    });
    const body = await getPage<{ models?: GeminiModel[]; nextPageToken?: string } | null>(
      request,
      `${base}?${query}`,
      headers,
    );
    const listed = (Array.isArray(body?.models) ? body.models : []).map((m) => m && listedOf(m));
    return { listed, next: typeof body?.nextPageToken === "string" ? body.nextPageToken : undefined };
  });
}
