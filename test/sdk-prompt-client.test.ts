/**
 * The SDK as a prompt client (`kiln.prompts.resolve`, sdk/README.md "Prompts for your own model
 * calls") against a live embedded platform: a version by id, by name, by label and by number;
 * `render` gives the messages and settings the platform itself sends the model for a run of the
 * same version (read at an OpenAI-compatible stub), and refuses the variables a run refuses with
 * the same details; with the server stopped, a cached version is still answered and the fallback
 * stands in for the rest.
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { Kiln, KilnError, type Prompt, type PromptVersion } from "@kiln/sdk";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";

let kiln: EmbeddedKiln;
let stopped = false;
let stub: OpenAIStub;
let baseUrl: string;
let user: Kiln;
let keyed: Kiln;
let organizationId: string;
let prompt: Prompt;
let v1: PromptVersion;
let v2: PromptVersion;
const name = `weather-${Date.now()}`;

const VARIABLES_SCHEMA = {
  type: "object",
  properties: { city: { type: "string", minLength: 2 }, unit: { enum: ["C", "F"] }, days: { type: "integer" } },
  required: ["city"],
  additionalProperties: false,
};
const ANSWER_SCHEMA = { type: "object", properties: { forecast: { type: "string" } }, required: ["forecast"] };

beforeAll(async () => {
  stub = await startOpenAIStub();
  ({ kiln, baseUrl } = await startEmbedded({
    providers: loadProvidersConfig({
      OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
        { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "m", inputPerMTokUsd: 0, outputPerMTokUsd: 0 }] },
      ]),
    }),
  }));
  const api = createTestClient(baseUrl);
  const { accessToken } = await api.signUp();
  organizationId = (await api.onboard(accessToken)).organization.id;
  const key = await api.createApiKey(accessToken, organizationId, ["prompts:read", "prompts:write", "runs:write"]);
  user = new Kiln({ baseUrl, accessToken });
  keyed = new Kiln({ baseUrl, apiKey: key.key });

  prompt = await user.prompts.create({ organizationId, name, defaultModel: "stub/m" });
  v1 = await user.prompts.createVersion(prompt.id, {
    systemPrompt: "Weather for {{city}} in °{{unit}} <{{days}} days>",
    developerPrompt: "Answer as JSON & keep it short.",
    variablesSchema: VARIABLES_SCHEMA,
    responseFormat: { type: "json_schema", name: "forecast", schema: ANSWER_SCHEMA },
    temperature: 0.3,
    maxOutputTokens: 200,
  });
  await user.prompts.publish(prompt.id, { versionId: v1.id });
  v2 = await user.prompts.createVersion(prompt.id, {
    systemPrompt: "Draft for {{city}}",
    variablesSchema: VARIABLES_SCHEMA,
    model: "local/echo",
  });
  await user.prompts.labels.set(prompt.id, "canary", v2.id);
});

afterAll(async () => {
  if (!stopped) await kiln?.close();
  await stub?.close();
});

describe("prompts.resolve against the platform", () => {
  it("by id, by name (an access token with organizationId; an API key without), by label and by number", async () => {
    expect(await user.prompts.resolve(prompt.id)).toMatchObject({ promptId: prompt.id, versionId: v1.id, version: 1 });
    expect(await user.prompts.resolve(name, { organizationId })).toMatchObject({ versionId: v1.id });
    expect(await keyed.prompts.resolve(name)).toMatchObject({ versionId: v1.id });
    expect(await keyed.prompts.resolve(name, { label: "canary" })).toMatchObject({ versionId: v2.id, version: 2 });
    expect(await keyed.prompts.resolve(prompt.id, { label: "latest" })).toMatchObject({ versionId: v2.id });
    expect(await keyed.prompts.resolve(prompt.id, { version: 1 })).toMatchObject({ versionId: v1.id });
    expect(await keyed.prompts.resolve(prompt.id, { versionId: v2.id })).toMatchObject({ versionId: v2.id });
    const missing = await keyed.prompts.resolve(`${name}-missing`).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(KilnError);
    expect(missing).toMatchObject({ status: 404, code: "not_found" });
  });

  it("renders the messages and settings a run of the same version sends the model", async () => {
    const resolved = await keyed.prompts.resolve(prompt.id);
    const variables = { city: "Zürich & <Bern>", unit: "C", days: 3 };
    const rendered = resolved.render(variables);
    expect(rendered).toMatchObject({
      messages: [
        { role: "system", content: "Weather for Zürich & <Bern> in °C <3 days>" },
        { role: "developer", content: "Answer as JSON & keep it short." },
      ],
      model: "stub/m",
      temperature: 0.3,
      maxOutputTokens: 200,
      responseFormat: { type: "json_schema", name: "forecast", schema: ANSWER_SCHEMA },
    });

    stub.reset();
    stub.script(stubReply.json({ forecast: "sunny" }));
    await keyed.prompts.run(prompt.id, { organizationId, variables });
    const sent = stub.requests.at(-1)?.body;
    expect(sent.messages).toEqual(rendered.messages);
    expect(`stub/${sent.model}`).toBe(rendered.model);
    expect(sent.temperature).toBe(rendered.temperature);
    // A compatible provider gets max_tokens by default (its maxTokensParam), OpenAI max_completion_tokens.
    expect(sent.max_tokens).toBe(rendered.maxOutputTokens);
    expect(sent.response_format.json_schema).toMatchObject({ name: "forecast", schema: ANSWER_SCHEMA });
  });

  it("refuses the variables a run refuses, with the same details", async () => {
    const resolved = await keyed.prompts.resolve(prompt.id);
    for (const variables of [{}, { city: "X", unit: "K", extra: 1 }, { city: "Oslo", days: "3" }]) {
      const ran = await keyed.prompts.run(prompt.id, { organizationId, variables }).catch((e: unknown) => e);
      let rendered: unknown;
      try {
        resolved.render(variables);
      } catch (e) {
        rendered = e;
      }
      expect(ran).toBeInstanceOf(KilnError);
      expect(rendered).toBeInstanceOf(KilnError);
      const [a, b] = [ran as KilnError, rendered as KilnError];
      expect([b.status, b.code, b.message]).toEqual([a.status, a.code, a.message]);
      expect(b.details).toEqual(a.details);
    }
  });

  it("with the server stopped: a cached version is still answered, the fallback stands in for the rest", async () => {
    const fresh = new Kiln({ baseUrl, apiKey: "sk_unused", maxRetries: 0, timeoutMs: 2_000 });
    const cached = await keyed.prompts.resolve(prompt.id, { cacheTtlMs: 50 });
    await kiln.close();
    stopped = true;
    await new Promise((resolve) => setTimeout(resolve, 60));
    // Stale now: answered at once, the revalidation fails in the background.
    expect(await keyed.prompts.resolve(prompt.id, { cacheTtlMs: 50 })).toBe(cached);
    const fallback = { systemPrompt: "Offline copy for {{city}}", variablesSchema: VARIABLES_SCHEMA };
    const offline = await fresh.prompts.resolve(name, { fallback });
    expect(offline).toMatchObject({ isFallback: true, versionId: null });
    expect(offline.fallbackCause).toBeInstanceOf(TypeError);
    expect(offline.render({ city: "Oslo" }).messages).toEqual([{ role: "system", content: "Offline copy for Oslo" }]);
    await expect(fresh.prompts.resolve(name)).rejects.toThrow(TypeError);
  });
});
