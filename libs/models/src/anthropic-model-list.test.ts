/**
 * Anthropic discovery against the Anthropic stub (faithful to the Models API, pages included):
 * every page followed with `after_id`, at most MAX_PAGES of them, the catalog's prices for the
 * Claude models it knows (dated snapshots too), images unless the model says otherwise, and the
 * vendor's 401 for a wrong key as a provider_error without the key.
 */
import { type AnthropicStub, startAnthropicStub } from "@kiln/testing/anthropic-stub";
import { afterEach, describe, expect, it } from "vitest";
import { listAnthropicModels } from "./anthropic-model-list.js";
import { createHttpFetch } from "./http-fetch.js";
import { MAX_PAGES, type ModelListRequest } from "./model-list.js";
import { ProviderError } from "./provider.js";

const KEY = "sk-ant-discovery-0123456789";
let stub: AnthropicStub | undefined;
afterEach(() => stub?.close());

const request = (baseUrl: string, apiKey = KEY): ModelListRequest => ({
  id: "claude-conn",
  baseUrl,
  apiKey,
  fetch: createHttpFetch(),
  signal: AbortSignal.timeout(5_000),
});

describe("listAnthropicModels", () => {
  it("follows every page, with the key and version, and prices the Claude models the catalog knows", async () => {
    stub = await startAnthropicStub({
      apiKey: KEY,
      pageCap: 2,
      models: [
        { id: "claude-opus-4-6" },
        { id: "claude-haiku-4-5-20251001" },
        { id: "claude-future-9", lifecycle: "deprecated" },
        { id: "claude-text-only", imageInput: false },
        { id: "claude-older", noCapabilities: true },
      ],
    });
    const listed = await listAnthropicModels(request(`${stub.baseUrl}/v1`));
    expect(listed).toEqual([
      {
        model: "claude-opus-4-6",
        input: ["text", "image"],
        pricing: { inputPerMTokUsd: 5, outputPerMTokUsd: 25, cachedInputPerMTokUsd: 0.5, cacheWritePerMTokUsd: 6.25 },
      },
      {
        model: "claude-haiku-4-5-20251001",
        input: ["text", "image"],
        pricing: { inputPerMTokUsd: 1, outputPerMTokUsd: 5, cachedInputPerMTokUsd: 0.1, cacheWritePerMTokUsd: 1.25 },
      },
      { model: "claude-future-9", input: ["text", "image"] },
      { model: "claude-text-only", input: ["text"] },
      { model: "claude-older", input: ["text", "image"] },
    ]);
    expect(stub.requests.map((r) => [r.method, r.path, r.query])).toEqual([
      ["GET", "/v1/models", { limit: "1000" }],
      ["GET", "/v1/models", { limit: "1000", after_id: "claude-haiku-4-5-20251001" }],
      ["GET", "/v1/models", { limit: "1000", after_id: "claude-text-only" }],
    ]);
    expect(stub.requests[0]?.headers).toMatchObject({ "x-api-key": KEY, "anthropic-version": "2023-06-01" });
  });

  it("stops after MAX_PAGES pages, whatever the provider says is left", async () => {
    const models = Array.from({ length: MAX_PAGES + 5 }, (_, i) => ({ id: `claude-m${i}` }));
    stub = await startAnthropicStub({ apiKey: KEY, pageCap: 1, models });
    const listed = await listAnthropicModels(request(stub.baseUrl));
    expect(listed.map((m) => m.model)).toEqual(models.slice(0, MAX_PAGES).map((m) => m.id));
    expect(stub.requests).toHaveLength(MAX_PAGES);
  });

  it("answers the vendor's 401 as a provider_error with its message, never the key", async () => {
    stub = await startAnthropicStub({ apiKey: "sk-ant-the-right-one" });
    const failed = await listAnthropicModels(request(stub.baseUrl)).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ProviderError);
    const error = failed as ProviderError;
    expect(error.kind).toBe("provider_error");
    expect(error.status).toBe(401);
    expect(error.message).toMatch(/^answered HTTP 401: authentication_error: invalid x-api-key/);
    // The stub echoes the key it got: it is cut out.
    expect(error.message).not.toContain(KEY);
  });
});
