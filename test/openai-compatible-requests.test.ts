/**
 * What OpenAI clients send to Chat Completions (docs/openai-compatible.md "Request"), through the
 * real `openai` npm SDK against the embedded platform whose model is the OpenAI stub: the stub
 * shows what the provider received. Caller system/developer messages, caller tools and the tool
 * call round trip, response_format, sampling parameters, refused fields, metadata.variables,
 * x-should-retry, cost, models.retrieve and CORS.
 */

import { loadProvidersConfig } from "@kiln/execution/config";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

// biome-ignore lint/suspicious/noExplicitAny: SDK errors are read loosely and asserted on.
type Loose = any;

const SCHEMA = { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] };
const LOOKUP = {
  type: "function" as const,
  function: {
    name: "lookup",
    description: "Looks a city up",
    parameters: { type: "object", properties: { city: { type: "string" } } },
  },
};

const failure = (p: Promise<unknown>): Promise<Loose> =>
  p.then(
    () => null,
    (e) => e,
  );

describe("OpenAI-compatible Chat Completions: what clients send", () => {
  let stub: OpenAIStub;
  let kiln: EmbeddedKiln;
  let base: string;
  let flow: FlowResult;
  let openai: OpenAI;
  let plain: { id: string; name: string };
  let withSchema: { id: string };
  let withTool: { id: string };
  /** The tool key the prompt's own tool is offered to the model under (set by the tool round trip test). */
  let promptToolKey = "";

  beforeAll(async () => {
    stub = await startOpenAIStub({});
    const providers = loadProvidersConfig({
      OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
        { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "m", inputPerMTokUsd: 2, outputPerMTokUsd: 4 }] },
      ]),
      PROVIDER_MAX_RETRIES: "0",
    });
    const started = await startEmbedded({ providers, corsOrigins: ["https://app.example.com"] });
    kiln = started.kiln;
    base = started.baseUrl;
    flow = await runIdentityFlow(base, ["prompts:read", "skills:read", "runs:write"]);
    const client = createTestClient(base);
    const name = `Helper ${Date.now()}`;
    const p = await client.createPublishedPrompt(
      flow.token,
      flow.organizationId,
      {
        model: "stub/m",
        systemPrompt: "Help {{person}}.",
        developerPrompt: "Be brief.",
        variablesSchema: { type: "object", properties: { person: { type: "string" } }, required: ["person"] },
      },
      { name },
    );
    plain = { id: p.prompt.id, name };
    const s = await client.createPublishedPrompt(flow.token, flow.organizationId, {
      model: "stub/m",
      systemPrompt: "Summarize.",
      responseFormat: { type: "json_schema", name: "summary", schema: SCHEMA },
    });
    withSchema = { id: s.prompt.id };
    const tool = await client.createTool(flow.token, flow.organizationId, {
      name: "Weather",
      config: { result: { temperatureC: 21 } },
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    });
    const t = await client.createPublishedPrompt(flow.token, flow.organizationId, {
      model: "stub/m",
      systemPrompt: "Plan a trip.",
      tools: [tool.id],
    });
    withTool = { id: t.prompt.id };
    openai = new OpenAI({ apiKey: flow.apiKey, baseURL: `${base}/v1`, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await kiln?.close();
    await stub?.close();
  });

  const lastSent = () => stub.requests.at(-1)?.body;

  it("appends the caller's system and developer messages after the prompt's own", async () => {
    stub.script(stubReply.text("ok"));
    const data = await openai.chat.completions.create({
      model: `kiln/${plain.name}`,
      messages: [
        { role: "system", content: "Answer in French." },
        { role: "developer", content: [{ type: "text", text: "No emojis." }] },
        { role: "user", content: "Hello" },
      ],
      variables: { person: "Ada" },
    } as never);
    expect(data.choices[0]?.message.content).toBe("ok");
    expect(lastSent().messages).toEqual([
      { role: "system", content: "Help Ada." },
      { role: "developer", content: "Be brief." },
      { role: "system", content: "Answer in French." },
      { role: "developer", content: "No emojis." },
      { role: "user", content: "Hello" },
    ]);
  });

  it("returns a call to a caller tool as tool_calls, and takes the round trip back", async () => {
    stub.script(stubReply.toolCalls([{ id: "call_1", name: "lookup", arguments: { city: "Oslo" } }]));
    const first = await openai.chat.completions.create({
      model: `kiln/${withTool.id}`,
      messages: [{ role: "user", content: "Trip to Oslo" }],
      tools: [LOOKUP],
      tool_choice: "auto",
    });
    // The provider was offered the prompt's tool (named by its tool key) and the caller's.
    const offered = lastSent().tools.map((t: Loose) => t.function.name);
    expect(offered).toEqual([expect.stringMatching(/^tool_/), "lookup"]);
    promptToolKey = offered[0];
    expect(lastSent().tool_choice).toBe("auto");
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    expect(choice?.message.content).toBeNull();
    expect(choice?.message.tool_calls).toEqual([
      { id: "call_1", type: "function", function: { name: "lookup", arguments: '{"city":"Oslo"}' } },
    ]);

    stub.script(stubReply.text("Oslo is cold"));
    const second = await openai.chat.completions.create({
      model: `kiln/${withTool.id}`,
      messages: [
        { role: "user", content: "Trip to Oslo" },
        choice?.message as OpenAI.ChatCompletionAssistantMessageParam,
        { role: "tool", tool_call_id: "call_1", content: '{"tempC":-3}' },
      ],
      tools: [LOOKUP],
    });
    expect(second.choices[0]?.message.content).toBe("Oslo is cold");
    expect(second.choices[0]?.finish_reason).toBe("stop");
    expect(lastSent().messages.slice(1)).toEqual([
      { role: "user", content: "Trip to Oslo" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"city":"Oslo"}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"tempC":-3}' },
    ]);
  });

  it("passes temperature, max_tokens, stop, seed, top_p and the penalties to the provider", async () => {
    stub.script(stubReply.text("fine"));
    await openai.chat.completions.create({
      model: `kiln/${plain.id}`,
      messages: [],
      variables: { person: "Ada" },
      temperature: 0.3,
      max_tokens: 42,
      stop: "END",
      seed: 7,
      top_p: 0.9,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
      n: 1,
    } as never);
    // A compatible provider takes max_tokens (its maxTokensParam), OpenAI max_completion_tokens.
    expect(lastSent().max_tokens ?? lastSent().max_completion_tokens).toBe(42);
    expect(lastSent()).toMatchObject({
      temperature: 0.3,
      stop: ["END"],
      seed: 7,
      top_p: 0.9,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
    });
  });

  it("honours response_format on a prompt without one, and refuses one that conflicts", async () => {
    stub.script(stubReply.json({ a: 1 }));
    const data = await openai.chat.completions.create({
      model: `kiln/${plain.id}`,
      messages: [],
      variables: { person: "Ada" },
      response_format: { type: "json_object" },
    } as never);
    expect(lastSent().response_format).toEqual({ type: "json_object" });
    expect(JSON.parse(data.choices[0]?.message.content ?? "")).toEqual({ a: 1 });

    stub.script(stubReply.json({ summary: "s" }));
    await openai.chat.completions.create({
      model: `kiln/${plain.id}`,
      messages: [],
      variables: { person: "Ada" },
      response_format: { type: "json_schema", json_schema: { name: "mine", schema: SCHEMA } },
    } as never);
    expect(lastSent().response_format).toMatchObject({
      type: "json_schema",
      json_schema: { name: "mine", schema: SCHEMA },
    });

    const sent = stub.requests.length;
    const conflict = await failure(
      openai.chat.completions.create({
        model: `kiln/${withSchema.id}`,
        messages: [],
        response_format: { type: "json_object" },
      }),
    );
    expect(conflict).toBeInstanceOf(OpenAI.BadRequestError);
    expect(conflict.param).toBe("response_format");
    expect(stub.requests.length).toBe(sent);
  });

  it("refuses what it cannot honour with 400 naming the field", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ n: 2 }, "n"],
      [{ functions: [{ name: "f", parameters: { type: "object" } }] }, "functions"],
      [{ function_call: "auto" }, "function_call"],
      [{ logprobs: true }, "logprobs"],
      [{ user: "u1" }, "user"],
      [{ audio: { voice: "alloy", format: "mp3" } }, "audio"],
      [{ reasoning_effort: "low" }, "reasoning_effort"],
      [{ metadata: { team: "x" } }, "metadata.team"],
      [{ max_tokens: 5, max_completion_tokens: 5 }, "max_tokens"],
      [{ temperature: 5 }, "temperature"],
      [{ tools: [{ type: "function", function: { name: promptToolKey } }] }, "tools[0].function.name"],
      [{ messages: [{ role: "function", name: "f", content: "x" }] }, "messages[0].role"],
      [
        { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] }] },
        "messages[0].content[0]",
      ],
      [{ messages: [{ role: "tool", tool_call_id: "nope", content: "x" }] }, "messages[0].tool_call_id"],
    ];
    const sent = stub.requests.length;
    for (const [fields, param] of cases) {
      const error = await failure(
        openai.chat.completions.create({ model: `kiln/${withTool.id}`, messages: [], ...fields } as never),
      );
      expect(error, param).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.param).toBe(param);
      expect(error.type).toBe("invalid_request_error");
    }
    expect(stub.requests.length).toBe(sent);
  });

  it("takes the variables from metadata.variables, as an object or its JSON text", async () => {
    for (const variables of [{ person: "Grace" }, JSON.stringify({ person: "Grace" })]) {
      stub.script(stubReply.text("ok"));
      await openai.chat.completions.create({
        model: `kiln/${plain.id}`,
        messages: [],
        metadata: { variables } as never,
      });
      expect(lastSent().messages[0]).toEqual({ role: "system", content: "Help Grace." });
    }
  });

  it("answers the run's cost in usage.cost_usd and x-kiln-cost-usd", async () => {
    stub.script(stubReply.text("ok", { usage: { prompt_tokens: 1_000_000, completion_tokens: 500_000 } }));
    const { data, response } = await openai.chat.completions
      .create({ model: `kiln/${plain.id}`, messages: [], variables: { person: "Ada" } } as never)
      .withResponse();
    expect((data.usage as Loose).cost_usd).toBe(4);
    expect(response.headers.get("x-kiln-cost-usd")).toBe("4");
  });

  it("a failed run answers x-should-retry: false, so the SDK's default retries make no second run", async () => {
    const retrying = new OpenAI({ apiKey: flow.apiKey, baseURL: `${base}/v1` });
    stub.script(stubReply.error(400, { message: "bad request upstream" }));
    const sent = stub.requests.length;
    const error = await failure(
      retrying.chat.completions.create({
        model: `kiln/${plain.id}`,
        messages: [],
        variables: { person: "A" },
      } as never),
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(502);
    expect(error.headers.get("x-should-retry")).toBe("false");
    expect(error.error).toMatchObject({ should_retry: false, kiln_run_id: error.headers.get("x-kiln-run-id") });
    expect(stub.requests.length).toBe(sent + 1);
  });

  it("retrieves models by kiln/ id or name and lists label variants", async () => {
    const read = await call(base, "GET", `/api/prompts/${plain.id}`, { token: flow.token });
    const moved = await call(base, "PUT", `/api/prompts/${plain.id}/labels/canary`, {
      token: flow.token,
      body: { versionId: (read.body as { publishedVersionId: string }).publishedVersionId },
    });
    expect(moved.status).toBe(200);
    for (const id of [`kiln/${plain.name}`, `kiln/${plain.id}`, `kiln/${plain.id}@canary`]) {
      const model = await openai.models.retrieve(id);
      expect(model).toMatchObject({ id, object: "model", owned_by: flow.organizationId });
      expect(model.created).toBeGreaterThan(0);
    }
    const missing = await failure(openai.models.retrieve(`kiln/${plain.id}@nope`));
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    const ids: string[] = [];
    for await (const model of openai.models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining([`kiln/${plain.id}`, `kiln/${plain.id}@canary`]));
  });

  it("answers CORS for a configured origin only", async () => {
    const preflight = await fetch(`${base}/v1/chat/completions`, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example.com",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(preflight.headers.get("access-control-allow-methods")).toContain("DELETE");
    const other = await fetch(`${base}/v1/models`, {
      headers: { origin: "https://evil.example.com", authorization: `Bearer ${flow.apiKey}` },
    });
    expect(other.status).toBe(200);
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const allowed = await fetch(`${base}/v1/models`, {
      headers: { origin: "https://app.example.com", authorization: `Bearer ${flow.apiKey}` },
    });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(allowed.headers.get("access-control-expose-headers")).toContain("x-kiln-cost-usd");
    // Errors carry the headers too, so that the page can read them.
    const refused = await fetch(`${base}/v1/models`, { headers: { origin: "https://app.example.com" } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
  });
});
