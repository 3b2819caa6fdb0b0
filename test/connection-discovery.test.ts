/**
 * Model discovery for every connection kind that lists its models (issue #48, "Discovery"), over
 * real HTTP in the embedded mode against the Anthropic, Gemini and Bedrock stubs: a connection
 * created without `models` takes what its provider lists (filtered, the catalog's prices where it
 * knows the model), which the organization's `GET /api/models` then has and its prompts run; `/test`
 * lists without spending tokens; a provider refusing the key leaves a connection without models
 * (`201`) and a `/test` of `ok: false`, the key in no answer.
 */
import { parseHostPatterns } from "@kiln/kit/outbound/host-patterns";
import { type AnthropicStub, startAnthropicStub } from "@kiln/testing/anthropic-stub";
import { type BedrockStub, startBedrockStub } from "@kiln/testing/bedrock-stub";
import { type GeminiStub, startGeminiStub } from "@kiln/testing/gemini-stub";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";

const ANTHROPIC_KEY = "sk-ant-discovery-key-0001";
const GEMINI_KEY = "AIza-discovery-key-0002";
const AWS = { accessKeyId: "AKIDDISCOVERY0003", secretAccessKey: "aws-discovery-secret-0003", region: "us-west-2" };

interface Connection {
  id: string;
  models: { id: string; model: string; inputPerMTokUsd: number | null; capabilities: { input: string[] } }[];
}
interface CatalogModel {
  id: string;
  available: boolean;
  connectionId?: string;
  capabilities: { input: string[] };
  pricing: { inputPerMTokUsd: number | null; outputPerMTokUsd: number | null; cacheWritePerMTokUsd?: number | null };
}

describe("model discovery of anthropic, gemini and bedrock connections", () => {
  let kiln: EmbeddedKiln;
  let api: TestClient;
  let owner: string;
  let org: string;
  let anthropic: AnthropicStub;
  let gemini: GeminiStub;
  let bedrock: BedrockStub;
  const answers: string[] = [];

  const call = async <T>(method: "GET" | "POST", path: string, body?: unknown) => {
    const r = await api.request<T>(method, path, { token: owner, ...(body !== undefined && { body }) });
    answers.push(r.text);
    return r;
  };
  const create = (body: Record<string, unknown>) =>
    call<Connection>("POST", "/api/provider-connections", { organizationId: org, ...body });

  beforeAll(async () => {
    anthropic = await startAnthropicStub({
      apiKey: ANTHROPIC_KEY,
      pageCap: 2,
      models: [{ id: "claude-sonnet-4-6" }, { id: "claude-haiku-4-5-20251001" }, { id: "claude-next-1" }],
    });
    gemini = await startGeminiStub({ apiKey: GEMINI_KEY, pageCap: 2 });
    bedrock = await startBedrockStub(AWS);
    let baseUrl: string;
    ({ kiln, baseUrl } = await startEmbedded({ connections: { privateHosts: parseHostPatterns("127.0.0.1") } }));
    api = createTestClient(baseUrl);
    owner = (await api.signUp()).accessToken;
    org = (await api.onboard(owner)).organization.id;
  });

  afterAll(async () => {
    await kiln?.close();
    await Promise.all([anthropic?.close(), gemini?.close(), bedrock?.close()]);
  });

  it("creates each without models: they are what the provider lists, in the organization's /api/models", async () => {
    const claude = await create({
      name: "claude",
      provider: "anthropic",
      apiKey: ANTHROPIC_KEY,
      baseUrl: anthropic.baseUrl,
    });
    expect(claude.status, claude.text).toBe(201);
    expect(claude.body.models.map((m) => m.id)).toEqual([
      "claude/claude-sonnet-4-6",
      "claude/claude-haiku-4-5-20251001",
      "claude/claude-next-1",
    ]);
    // Two pages: the stub holds two models a page.
    expect(anthropic.requests.filter((r) => r.path === "/v1/models")).toHaveLength(2);

    const gem = await create({ name: "gem", provider: "gemini", apiKey: GEMINI_KEY, baseUrl: gemini.baseUrl });
    expect(gem.status, gem.text).toBe(201);
    // The stub's embedding and image-generation models do not generate content.
    expect(gem.body.models.map((m) => m.id)).toEqual([
      "gem/gemini-2.5-flash",
      "gem/gemini-2.5-pro",
      "gem/gemini-2.5-flash-lite",
    ]);

    const aws = await create({ name: "aws", provider: "bedrock", baseUrl: bedrock.baseUrl, ...AWS });
    expect(aws.status, aws.text).toBe(201);
    // Embeddings, inference-profile-only and legacy models are left out.
    expect(aws.body.models.map((m) => m.id)).toEqual([
      "aws/amazon.nova-micro-v1:0",
      "aws/amazon.nova-lite-v1:0",
      "aws/amazon.nova-pro-v1:0",
      "aws/anthropic.claude-3-5-haiku-20241022-v1:0",
    ]);

    const listed = await call<{ data: CatalogModel[] }>("GET", `/api/models?organizationId=${org}`);
    const byId = new Map(listed.body.data.map((m) => [m.id, m]));
    expect(byId.get("claude/claude-haiku-4-5-20251001")).toMatchObject({
      available: true,
      connectionId: claude.body.id,
      capabilities: { input: ["text", "image"] },
      pricing: { inputPerMTokUsd: 1, outputPerMTokUsd: 5, cacheWritePerMTokUsd: 1.25 },
    });
    expect(byId.get("claude/claude-next-1")?.pricing).toMatchObject({ inputPerMTokUsd: null, outputPerMTokUsd: null });
    expect(byId.get("gem/gemini-2.5-pro")).toMatchObject({
      connectionId: gem.body.id,
      pricing: { inputPerMTokUsd: 1.25, outputPerMTokUsd: 10 },
    });
    expect(byId.get("aws/amazon.nova-lite-v1:0")).toMatchObject({
      connectionId: aws.body.id,
      capabilities: { input: ["text", "image"] },
      pricing: { inputPerMTokUsd: 0.06, outputPerMTokUsd: 0.24 },
    });
    expect(byId.get("aws/amazon.nova-micro-v1:0")?.capabilities.input).toEqual(["text"]);
  });

  it("tests each by its list, spending no tokens", async () => {
    const connections = await call<{ data: (Connection & { name: string })[] }>(
      "GET",
      `/api/provider-connections?organizationId=${org}`,
    );
    for (const stub of [anthropic, gemini, bedrock]) stub.reset();
    for (const c of connections.body.data) {
      const r = await call<{ ok: boolean; models?: string[] }>("POST", `/api/provider-connections/${c.id}/test`);
      expect(r.body, c.name).toMatchObject({ ok: true });
      expect(r.body.models).toEqual(c.models.map((m) => m.model));
    }
    expect(anthropic.requests.every((r) => r.method === "GET")).toBe(true);
    expect(gemini.requests.every((r) => r.method === "GET")).toBe(true);
    expect(bedrock.requests.map((r) => r.method)).toEqual(["GET"]);
  });

  it("runs a prompt on a discovered model", async () => {
    const { prompt } = await api.createPublishedPrompt(owner, org, { systemPrompt: "Answer briefly." });
    const run = await call<{ status: string; model: string }>("POST", `/api/prompts/${prompt.id}/run`, {
      organizationId: org,
      variables: {},
      model: "aws/amazon.nova-micro-v1:0",
    });
    expect(run.status, run.text).toBe(201);
    expect(run.body.status).toBe("succeeded");
    expect(bedrock.requests.at(-1)?.path).toBe("/model/amazon.nova-micro-v1:0/converse");
  });

  it("creates a connection whose provider refuses the key without models, and tests it ok: false", async () => {
    const wrongKey = "sk-ant-not-the-key-9999";
    const created = await create({
      name: "refused",
      provider: "anthropic",
      apiKey: wrongKey,
      baseUrl: anthropic.baseUrl,
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.models).toEqual([]);
    const r = await call<{ ok: boolean; error: { code: string; message: string } }>(
      "POST",
      `/api/provider-connections/${created.body.id}/test`,
    );
    expect(r.body).toMatchObject({ ok: false, error: { code: "provider_error" } });
    expect(r.body.error.message).toContain("401");
    for (const secret of [wrongKey, ANTHROPIC_KEY, GEMINI_KEY, AWS.secretAccessKey])
      expect(answers.filter((a) => a.includes(secret))).toEqual([]);
  });
});
