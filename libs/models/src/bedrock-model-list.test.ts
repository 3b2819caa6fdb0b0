/**
 * Bedrock discovery against the Bedrock stub, which verifies every request's SigV4 signature (the
 * query included) with the AWS SDK's own signer: ListFoundationModels asked for on-demand text
 * models, then only ACTIVE ones that take and answer text on demand kept, images where the model
 * takes them, the catalog's prices where it knows the model; the vendor's refusal of a wrong
 * secret as a provider_error without the secret; where a base URL lists.
 */
import { type BedrockStub, startBedrockStub } from "@kiln/testing/bedrock-stub";
import { afterEach, describe, expect, it } from "vitest";
import { bedrockControlUrl, listBedrockModels } from "./bedrock-model-list.js";
import { createHttpFetch } from "./http-fetch.js";
import type { ModelListRequest } from "./model-list.js";
import { ProviderError } from "./provider.js";

const CREDENTIALS = { accessKeyId: "AKIDDISCOVERY0001", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+discoverySECRET" };
let stub: BedrockStub | undefined;
afterEach(() => stub?.close());

const request = (baseUrl: string, secretAccessKey = CREDENTIALS.secretAccessKey): ModelListRequest => ({
  id: "aws",
  baseUrl,
  region: "eu-west-3",
  accessKeyId: CREDENTIALS.accessKeyId,
  secretAccessKey,
  fetch: createHttpFetch(),
  signal: AbortSignal.timeout(5_000),
});

describe("listBedrockModels", () => {
  it("lists the active on-demand text models, signed, with images and catalog prices where known", async () => {
    stub = await startBedrockStub({
      ...CREDENTIALS,
      region: "eu-west-3",
      models: [
        { modelId: "amazon.nova-lite-v1:0", input: ["TEXT", "IMAGE", "VIDEO"] },
        { modelId: "anthropic.claude-3-5-haiku-20241022-v1:0", providerName: "Anthropic" },
        { modelId: "meta.llama3-8b-instruct-v1:0", providerName: "Meta" },
        { modelId: "anthropic.claude-sonnet-4-20250514-v1:0", inferenceTypes: ["INFERENCE_PROFILE"] },
        { modelId: "amazon.titan-embed-text-v2:0", output: ["EMBEDDING"] },
        { modelId: "stability.sd3-large-v1:0", output: ["IMAGE"] },
        { modelId: "amazon.titan-text-express-v1", status: "LEGACY" },
        { modelId: "amazon.pictures-only-v1:0", input: ["IMAGE"] },
      ],
    });
    const listed = await listBedrockModels(request(stub.baseUrl));
    expect(listed).toEqual([
      {
        model: "amazon.nova-lite-v1:0",
        input: ["text", "image"],
        pricing: { inputPerMTokUsd: 0.06, outputPerMTokUsd: 0.24, cachedInputPerMTokUsd: 0.015 },
      },
      {
        model: "anthropic.claude-3-5-haiku-20241022-v1:0",
        input: ["text"],
        pricing: { inputPerMTokUsd: 0.8, outputPerMTokUsd: 4, cachedInputPerMTokUsd: 0.08, cacheWritePerMTokUsd: 1 },
      },
      { model: "meta.llama3-8b-instruct-v1:0", input: ["text"] },
    ]);
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]).toMatchObject({
      method: "GET",
      path: "/foundation-models",
      query: { byOutputModality: "TEXT", byInferenceType: "ON_DEMAND" },
    });
    expect(stub.requests[0]?.headers.authorization).toMatch(
      /Credential=AKIDDISCOVERY0001\/\d{8}\/eu-west-3\/bedrock\//,
    );
  });

  it("answers the vendor's refusal of a wrong secret (403 InvalidSignatureException) without the secret", async () => {
    stub = await startBedrockStub({ ...CREDENTIALS, region: "eu-west-3" });
    const failed = (await listBedrockModels(request(stub.baseUrl, "not-the-secret-key")).catch(
      (e) => e,
    )) as ProviderError;
    expect(failed).toBeInstanceOf(ProviderError);
    expect(failed.status).toBe(403);
    expect(failed.message).toMatch(/^answered HTTP 403: InvalidSignatureException: The request signature/);
    expect(failed.message).not.toContain("not-the-secret-key");
  });

  it("lists at the region's control plane, a runtime base URL's control host, or another base URL's origin", () => {
    expect(bedrockControlUrl("us-east-1")).toBe("https://bedrock.us-east-1.amazonaws.com");
    expect(bedrockControlUrl("us-east-1", "https://bedrock-runtime.us-east-1.amazonaws.com")).toBe(
      "https://bedrock.us-east-1.amazonaws.com",
    );
    expect(bedrockControlUrl("us-gov-west-1", "https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com/")).toBe(
      "https://bedrock-fips.us-gov-west-1.amazonaws.com",
    );
    expect(bedrockControlUrl("us-east-1", "http://127.0.0.1:4566/some/path")).toBe("http://127.0.0.1:4566");
  });
});
