/**
 * Asking a provider which models it serves (docs/providers.md "Connections", "Discovery"): the
 * shape every kind's list is answered in, and the GET of one page each kind's lister is made of.
 * One deadline covers every page (the caller's signal); redirects are refused; an answer other than
 * 2xx is a provider_error carrying the provider's own message, redacted; a page that is not JSON is
 * a provider_error too. A failed connection or the deadline rejects as fetch does (the caller says
 * why). Nothing is retried: a list is asked for by a person creating or testing a connection, who
 * can ask again.
 */
import { builtInModelOf, type ModelInput, type ModelPricing } from "./model-catalog.js";
import { providerMessageOf, safeExcerpt } from "./openai-retry.js";
import { ProviderError } from "./provider.js";
import type { ProviderKind } from "./provider-kinds.js";
import type { ErrorAnswer } from "./remote-call.js";

/** A model the provider listed: what its input may carry, and the catalog's list prices when the catalog knows it. */
export interface ListedModel {
  model: string;
  input: ModelInput[];
  pricing?: ModelPricing;
}

/** What a lister needs of a connection. */
export interface ModelListRequest {
  /** The provider id, for messages (a connection's name). */
  id: string;
  /** Unset: the vendor's public endpoint. */
  baseUrl?: string;
  apiKey?: string;
  /** bedrock: the region and the AWS keys. */
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  /** The fetch every call of the connection goes through (the outbound policy). */
  fetch: typeof fetch;
  /** The deadline over every page. */
  signal: AbortSignal;
}

export type ModelLister = (request: ModelListRequest) => Promise<ListedModel[]>;

/** A connection holds at most this many models (connection-rules.ts MAX_MODELS): listing stops there. */
export const MAX_LISTED = 200;
/** Pages followed at most, whatever the provider says is left. */
export const MAX_PAGES = 10;

/** The secrets of a request, cut out of any provider text shown. */
export const secretsOf = (r: ModelListRequest): string[] =>
  [r.apiKey, r.secretAccessKey, r.sessionToken].filter((s): s is string => s !== undefined && s !== "");

/** One page of a list: GET `url` with `headers`, the answer's JSON. */
export async function getPage<T>(
  request: ModelListRequest,
  url: string,
  headers: Record<string, string>,
  messageOf: (answer: ErrorAnswer) => string = (a) => providerMessageOf(a.text),
): Promise<T> {
  const response = await request.fetch(url, {
    method: "GET",
    headers: { accept: "application/json", "user-agent": "kiln", ...headers },
    signal: request.signal,
    redirect: "error",
  });
  const text = await response.text();
  const info = { provider: request.id, model: "", status: response.status };
  if (response.status < 200 || response.status >= 300) {
    const excerpt = safeExcerpt(
      messageOf({ status: response.status, headers: response.headers, text }),
      secretsOf(request),
    );
    throw new ProviderError("provider_error", `answered HTTP ${response.status}${excerpt ? `: ${excerpt}` : ""}`, info);
  }
  try {
    return JSON.parse(text) as T;
  } catch (cause) {
    throw new ProviderError("provider_error", "the model list could not be read", { ...info, cause });
  }
}

/** A listed model as the connection takes it: the catalog's input and prices when it knows the model, else `input`. */
export function listedModel(kind: ProviderKind, model: string, input: ModelInput[]): ListedModel {
  const known = builtInModelOf(kind, model);
  return known ? { model, input: [...known.capabilities.input], pricing: { ...known.pricing } } : { model, input };
}

/** The models of every page, each once, the first MAX_LISTED. */
export function firstListed(models: ListedModel[]): ListedModel[] {
  const seen = new Set<string>();
  return models.filter((m) => !seen.has(m.model) && seen.add(m.model)).slice(0, MAX_LISTED);
}

/**
 * A paged list followed: `page(cursor)` (no cursor for the first) answers a page's models (those
 * a lister leaves out as undefined) and the next page's cursor, if any. At most MAX_PAGES pages and
 * MAX_LISTED models; a cursor that does not move ends the list.
 */
export async function followPages(
  page: (cursor: string | undefined) => Promise<{ listed: (ListedModel | undefined)[]; next?: string }>,
): Promise<ListedModel[]> {
  const models: ListedModel[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < MAX_PAGES && models.length < MAX_LISTED; n++) {
    const { listed, next } = await page(cursor);
    for (const m of listed) if (m) models.push(m);
    if (next === undefined || next === "" || next === cursor) break;
    cursor = next;
  }
  return firstListed(models);
}
