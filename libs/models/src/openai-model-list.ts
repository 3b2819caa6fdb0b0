/**
 * The models of an OpenAI-protocol endpoint: `GET {baseUrl}/models` with the key as a bearer token,
 * answered in OpenAI's list shape (`{object: "list", data: [{id, object: "model", created,
 * owned_by}]}`, one page). OpenAI's own list holds embedding, speech, image and moderation models
 * too: for kind `openai` only chat models are kept; a compatible endpoint's list is taken as it is.
 */
import { firstListed, getPage, type ListedModel, listedModel, type ModelListRequest } from "./model-list.js";
import { OPENAI_BASE_URL } from "./openai-endpoint.js";

/** Models of OpenAI's list that are not chat models (embeddings, speech, images, moderation...). */
const NOT_CHAT = /embedding|tts|whisper|dall-e|moderation|davinci|babbage|image|realtime|audio|transcribe|search|sora/;

/** A name a connection can take: no spaces. */
const usable = (id: unknown): id is string => typeof id === "string" && id !== "" && !/\s/.test(id);

export function openAIModelLister(kind: "openai" | "openai_compatible") {
  return async (request: ModelListRequest): Promise<ListedModel[]> => {
    const url = `${(request.baseUrl || OPENAI_BASE_URL).replace(/\/+$/, "")}/models`;
    const headers: Record<string, string> = request.apiKey ? { authorization: `Bearer ${request.apiKey}` } : {};
    const body = await getPage<{ data?: { id?: unknown }[] } | null>(request, url, headers);
    const ids = (Array.isArray(body?.data) ? body.data : [])
      .map((m) => m?.id)
      .filter(usable)
      .filter((id) => kind !== "openai" || !NOT_CHAT.test(id));
    return firstListed(ids.map((id) => listedModel(kind, id, ["text"])));
  };
}
