/**
 * Gemini discovery against the Gemini stub (faithful to `models.list`, pages included): every page
 * followed with `pageToken`, only models that answer generateContent (no embeddings, image
 * generators or speech models), the id without `models/`, the catalog's prices where it knows the
 * model, and the vendor's refusal of a wrong key as a provider_error.
 */
import { type GeminiStub, startGeminiStub } from "@kiln/testing/gemini-stub";
import { afterEach, describe, expect, it } from "vitest";
import { listGeminiModels } from "./gemini-model-list.js";
import { createHttpFetch } from "./http-fetch.js";
import type { ModelListRequest } from "./model-list.js";
import { ProviderError } from "./provider.js";

const KEY = "AIza-discovery-0123456789";
let stub: GeminiStub | undefined;
afterEach(() => stub?.close());

const request = (baseUrl: string, apiKey?: string): ModelListRequest => ({
  id: "gem",
  baseUrl,
  ...(apiKey !== undefined && { apiKey }),
  fetch: createHttpFetch(),
  signal: AbortSignal.timeout(5_000),
});

describe("listGeminiModels", () => {
  it("follows every page and keeps the models that generate content, priced where the catalog knows them", async () => {
    stub = await startGeminiStub({
      apiKey: KEY,
      pageCap: 2,
      models: [
        { id: "gemini-2.5-flash", thinking: true },
        { id: "gemini-embedding-001", methods: ["embedContent", "countTokens"] },
        { id: "gemini-2.5-flash-preview-tts", methods: ["generateContent", "countTokens"] },
        { id: "imagen-4.0-generate-001", methods: ["predict"] },
        { id: "gemma-3-27b-it" },
        { id: "gemini-3-pro-preview" },
      ],
    });
    const listed = await listGeminiModels(request(stub.baseUrl, KEY));
    expect(listed).toEqual([
      {
        model: "gemini-2.5-flash",
        input: ["text", "image"],
        pricing: { inputPerMTokUsd: 0.3, outputPerMTokUsd: 2.5, cachedInputPerMTokUsd: 0.075 },
      },
      { model: "gemma-3-27b-it", input: ["text"] },
      { model: "gemini-3-pro-preview", input: ["text", "image"] },
    ]);
    expect(stub.requests.map((r) => [r.path, r.query.pageSize, r.query.pageToken === undefined])).toEqual([
      ["/v1beta/models", "1000", true],
      ["/v1beta/models", "1000", false],
      ["/v1beta/models", "1000", false],
    ]);
    expect(stub.requests.every((r) => r.headers["x-goog-api-key"] === KEY && r.query.key === undefined)).toBe(true);
  });

  it("answers the vendor's refusal of a wrong key (400 API_KEY_INVALID) and of none (403) as provider errors", async () => {
    stub = await startGeminiStub({ apiKey: KEY });
    const wrong = (await listGeminiModels(request(stub.baseUrl, "AIza-wrong-key")).catch((e) => e)) as ProviderError;
    expect(wrong).toBeInstanceOf(ProviderError);
    expect(wrong.status).toBe(400);
    expect(wrong.message).toBe("answered HTTP 400: API key not valid. Please pass a valid API key.");
    const none = (await listGeminiModels(request(stub.baseUrl)).catch((e) => e)) as ProviderError;
    expect(none.status).toBe(403);
  });
});
