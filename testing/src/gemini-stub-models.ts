/**
 * The Gemini stub's model list (`GET /v1beta/models`), as the Gemini API reference describes it:
 * `Model` resources (`name: "models/…"`, `supportedGenerationMethods`, token limits), `pageSize`
 * (default 50, above 1000 taken as 1000) and an opaque `pageToken`, answered `{models,
 * nextPageToken}` (no token on the last page).
 */

/** A model the stub lists: its id and the methods it answers (default generateContent and countTokens). */
export interface GeminiStubModel {
  id: string;
  methods?: string[];
  displayName?: string;
  thinking?: boolean;
}

export const DEFAULT_GEMINI_MODELS: GeminiStubModel[] = [
  { id: "gemini-2.5-flash", thinking: true },
  { id: "gemini-2.5-pro", thinking: true },
  { id: "gemini-2.5-flash-lite", thinking: true },
  { id: "gemini-embedding-001", methods: ["embedContent", "countTextTokens", "countTokens", "asyncBatchEmbedContent"] },
  { id: "imagen-4.0-generate-001", methods: ["predict"] },
];

/** The REST resource of a stub model. */
export function modelResourceOf(m: GeminiStubModel) {
  const methods = m.methods ?? ["generateContent", "countTokens", "createCachedContent", "batchGenerateContent"];
  const generates = methods.includes("generateContent");
  return {
    name: `models/${m.id}`,
    version: "001",
    displayName: m.displayName ?? m.id,
    description: `${m.id}, served by the stub`,
    inputTokenLimit: generates ? 1_048_576 : 2048,
    outputTokenLimit: generates ? 65_536 : 1,
    supportedGenerationMethods: methods,
    ...(generates && { temperature: 1, topP: 0.95, topK: 64, maxTemperature: 2 }),
    ...(m.thinking !== undefined && { thinking: m.thinking }),
  };
}

const tokenOf = (offset: number) => Buffer.from(`offset:${offset}`).toString("base64url");
const offsetOf = (token: string) => /^offset:(\d+)$/.exec(Buffer.from(token, "base64url").toString())?.[1];

/** One page for the request's query, or the message of a 400 INVALID_ARGUMENT; `pageCap`: the most a page holds (a server may answer fewer than asked). */
export function modelsPage(
  all: readonly GeminiStubModel[],
  query: Record<string, string>,
  pageCap = 1000,
): { models: ReturnType<typeof modelResourceOf>[]; nextPageToken?: string } | { invalid: string } {
  const size = query.pageSize === undefined ? 50 : Number(query.pageSize);
  if (!Number.isInteger(size) || size < 0) return { invalid: "Invalid value at 'page_size' (TYPE_INT32)" };
  const pageSize = Math.min(size === 0 ? 50 : size, 1000, pageCap);
  const offset = query.pageToken ? offsetOf(query.pageToken) : "0";
  if (offset === undefined) return { invalid: "Invalid page token." };
  const start = Number(offset);
  const page = all.slice(start, start + pageSize).map(modelResourceOf);
  const next = start + pageSize < all.length ? tokenOf(start + pageSize) : undefined;
  return { models: page, ...(next && { nextPageToken: next }) };
}
