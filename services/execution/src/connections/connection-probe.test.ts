/**
 * The /test probe and create's discovery through the outbound policy (connection-fetch.ts), against
 * the provider stubs: a list call to an address PROVIDER_PRIVATE_HOSTS does not allow never leaves
 * (address_not_allowed), an allowed one lists the models, priced by discoveredModels; a vendor
 * refusing the credentials is `ok: false` without the secret; azure_openai, which has no list,
 * makes one model call.
 */
import { parseHostPatterns } from "@kiln/kit/outbound/host-patterns";
import { type ModelProvider, ProviderError } from "@kiln/models/provider";
import { startAnthropicStub } from "@kiln/testing/anthropic-stub";
import { startBedrockStub } from "@kiln/testing/bedrock-stub";
import { type GeminiStub, startGeminiStub } from "@kiln/testing/gemini-stub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discoveredModels } from "./connection-discovery.js";
import { createPolicyFetch } from "./connection-fetch.js";
import { probeConnection } from "./connection-probe.js";
import type { ProviderConnectionDoc } from "./connection-store.js";

const KEY = "AIza-probe-0123456789";
let gemini: GeminiStub;
beforeAll(async () => {
  gemini = await startGeminiStub({ apiKey: KEY });
});
afterAll(() => gemini.close());

const at = new Date("2026-01-01T00:00:00Z");
const docOf = (fields: Partial<ProviderConnectionDoc>): ProviderConnectionDoc => ({
  _id: "pcn_1",
  organizationId: "org_1",
  name: "conn",
  provider: "gemini",
  baseUrl: "",
  apiKey: null,
  apiKeyHint: "",
  secretAccessKey: null,
  settings: {},
  models: [],
  createdAt: at,
  updatedAt: at,
  ...fields,
});
/** A fetch under the policy where `gemini.test` resolves to the stub's loopback address. */
const policyFetch = (privateHosts: string) =>
  createPolicyFetch({
    privateHosts: parseHostPatterns(privateHosts),
    resolve: async (host) => (host === "gemini.test" ? [{ address: "127.0.0.1", family: 4 }] : []),
  });
const noProvider = (): ModelProvider => {
  throw new Error("a kind with a list makes no model call");
};
const geminiDoc = () => docOf({ baseUrl: gemini.baseUrl.replace("127.0.0.1", "gemini.test") });

describe("probeConnection", () => {
  it("refuses a list call to an address PROVIDER_PRIVATE_HOSTS does not allow: nothing is sent", async () => {
    gemini.reset();
    const outcome = await probeConnection(
      geminiDoc(),
      { apiKey: KEY, secrets: [KEY] },
      { fetch: policyFetch(""), provider: noProvider },
    );
    expect(outcome).toMatchObject({ ok: false, error: { code: "address_not_allowed" } });
    expect(gemini.requests).toHaveLength(0);
  });

  it("lists the models of an allowed host, which discovery prices from the catalog", async () => {
    gemini.reset();
    const doc = geminiDoc();
    const outcome = await probeConnection(
      doc,
      { apiKey: KEY, secrets: [KEY] },
      { fetch: policyFetch("gemini.test"), provider: noProvider },
    );
    expect(outcome).toMatchObject({
      ok: true,
      models: ["gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite"],
    });
    const models = discoveredModels(doc, outcome.listed ?? []);
    expect(models[1]).toEqual({
      model: "gemini-2.5-pro",
      inputPerMTokUsd: 1.25,
      outputPerMTokUsd: 10,
      cachedInputPerMTokUsd: 0.31,
      cacheWritePerMTokUsd: null,
      reasoningPerMTokUsd: null,
      capabilities: { tools: true, jsonSchema: true, input: ["text", "image"] },
    });
  });

  it("answers a vendor refusing the credentials as ok: false, never with the secret", async () => {
    const anthropic = await startAnthropicStub({ apiKey: "sk-ant-right-key-000" });
    const bedrock = await startBedrockStub({
      accessKeyId: "AKIDPROBE00000001",
      secretAccessKey: "right",
      region: "us-east-1",
    });
    try {
      const send = policyFetch("127.0.0.1");
      const wrongKey = "sk-ant-wrong-key-123";
      const a = await probeConnection(
        docOf({ provider: "anthropic", baseUrl: anthropic.baseUrl }),
        { apiKey: wrongKey, secrets: [wrongKey] },
        { fetch: send, provider: noProvider },
      );
      expect(a).toMatchObject({ ok: false, error: { code: "provider_error" } });
      expect(a.error?.message).toContain("401");
      expect(a.error?.message).not.toContain(wrongKey);
      const wrongSecret = "wrong-secret-access-key";
      const b = await probeConnection(
        docOf({
          provider: "bedrock",
          baseUrl: bedrock.baseUrl,
          settings: { region: "us-east-1", accessKeyId: "AKIDPROBE00000001" },
        }),
        { secretAccessKey: wrongSecret, secrets: [wrongSecret] },
        { fetch: send, provider: noProvider },
      );
      expect(b).toMatchObject({ ok: false, error: { code: "provider_error" } });
      expect(b.error?.message).toContain("InvalidSignatureException");
      expect(b.error?.message).not.toContain(wrongSecret);
    } finally {
      await anthropic.close();
      await bedrock.close();
    }
  });

  it("makes one model call for azure_openai, which has no list", async () => {
    const calls: string[] = [];
    const provider: ModelProvider = {
      id: "az",
      async generate(request) {
        calls.push(request.model);
        throw new ProviderError("provider_error", "answered HTTP 404", { provider: "az", model: request.model });
      },
    };
    const outcome = await probeConnection(
      docOf({
        provider: "azure_openai",
        baseUrl: "https://x.openai.azure.com",
        models: discoveredModels(docOf({}), [{ model: "gpt-4o", input: ["text"] }]),
      }),
      { apiKey: "k", secrets: [] },
      { fetch: policyFetch(""), provider: () => provider },
    );
    expect(calls).toEqual(["gpt-4o"]);
    expect(outcome).toMatchObject({ ok: false, error: { code: "provider_error" } });
    expect(outcome.models).toBeUndefined();
  });
});
