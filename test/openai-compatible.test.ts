/**
 * The OpenAI-compatible endpoint (docs/openai-compatible.md) called with the real `openai` npm SDK:
 * a Kiln API key as the SDK's apiKey, Kiln prompts and skills as models, local/echo as the model.
 */

import { createLogger } from "@kiln/kit/logger";
import { buildEmbedded } from "@kiln/launcher/embedded";
import { startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

// biome-ignore lint/suspicious/noExplicitAny: SDK errors are read loosely and asserted on.
type Loose = any;

const RUN_ID = /^[a-z]+_[0-9a-f]{32}$/;

const modes = [
  {
    name: "embedded mode",
    full: true,
    async start() {
      const kiln = await buildEmbedded({ logger: createLogger({ name: "test", level: "silent" }) });
      const base = await kiln.gateway.app.listen({ host: "127.0.0.1", port: 0 });
      return { base, stop: () => kiln.close() };
    },
  },
  {
    name: "distributed mode (FerretDB, NATS)",
    full: false,
    async start() {
      const kiln = await startDistributed({ mongoUrl: inject("mongoUrl"), natsUrl: inject("natsUrl") });
      return { base: kiln.gatewayUrl, stop: () => kiln.stop() };
    },
  },
];

describe.each(modes)("OpenAI-compatible endpoint in $name", (mode) => {
  // Distributed mode takes the plain call and the errors only (the rest is the same gateway code).
  const itFull = mode.full ? it : ((() => undefined) as unknown as typeof it);
  let running: Awaited<ReturnType<(typeof modes)[number]["start"]>>;
  let flow: FlowResult;
  let openai: OpenAI;
  let greeting: { id: string; name: string };
  let forecast: { id: string; name: string };
  let skill: { id: string; name: string };

  beforeAll(async () => {
    running = await mode.start();
    const client = createTestClient(running.base);
    flow = await runIdentityFlow(running.base, ["prompts:read", "skills:read", "runs:write"]);
    const { token, organizationId } = flow;
    const name = `Greeting ${Date.now()}`;
    const g = await client.createPublishedPrompt(
      token,
      organizationId,
      {
        model: "local/echo",
        systemPrompt: "Greet {{person}} warmly.",
        variablesSchema: { type: "object", properties: { person: { type: "string" } }, required: ["person"] },
      },
      { name },
    );
    greeting = { id: g.prompt.id, name };
    const tool = await client.createTool(token, organizationId, {
      name: "Weather",
      config: { result: { temperatureC: 21, sky: "clear" } },
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    });
    const f = await client.createPublishedPrompt(token, organizationId, {
      model: "local/echo",
      systemPrompt: "Write the forecast for {{city}}.",
      variablesSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      responseFormat: {
        type: "json_schema",
        name: "forecast",
        schema: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] },
      },
      tools: [tool.id],
    });
    forecast = { id: f.prompt.id, name: f.prompt.name };
    const s = await client.createSkill(token, organizationId, { name: `Trip ${Date.now()}` });
    const composed = await client.replaceSkillPrompts(token, s.draftVersionId ?? "", [
      { promptId: f.prompt.id, alias: "forecast" },
    ]);
    expect(composed.id).toBe(s.id);
    await client.publishSkill(token, s.id);
    skill = { id: s.id, name: s.name };
    openai = new OpenAI({ apiKey: flow.apiKey, baseURL: `${running.base}/v1`, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  it("answers a plain completion by prompt name, with the run id as id and header", async () => {
    const { data, response } = await openai.chat.completions
      .create({ model: `kiln/${greeting.name}`, messages: [], variables: { person: "Ada" } } as never)
      .withResponse();
    expect(data.object).toBe("chat.completion");
    expect(data.id).toMatch(RUN_ID);
    expect(response.headers.get("x-kiln-run-id")).toBe(data.id);
    expect(data.model).toBe(`kiln/${greeting.name}`);
    expect(data.choices).toHaveLength(1);
    expect(data.choices[0]?.message.role).toBe("assistant");
    expect(data.choices[0]?.message.content).toContain("Ada");
    expect(data.choices[0]?.finish_reason).toBe("stop");
    expect(data.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(data.usage?.completion_tokens).toBeGreaterThan(0);
    expect(data.usage?.total_tokens).toBe((data.usage?.prompt_tokens ?? 0) + (data.usage?.completion_tokens ?? 0));
    // By id and with the explicit default label: the same prompt, a new stored run.
    const again = await openai.chat.completions.create({
      model: `kiln/${greeting.id}@production`,
      messages: [],
      variables: { person: "Grace" },
    } as never);
    expect(again.id).toMatch(RUN_ID);
    expect(again.id).not.toBe(data.id);
    expect(again.choices[0]?.message.content).toContain("Grace");
  });

  it("runs the version a label points at with kiln/<prompt>@<label>", async () => {
    const token = flow.token;
    const v2 = await createTestClient(running.base).createPromptVersion(token, greeting.id, {
      model: "local/echo",
      systemPrompt: "Say goodbye to {{person}}.",
      variablesSchema: { type: "object", properties: { person: { type: "string" } }, required: ["person"] },
    });
    const moved = await call(running.base, "PUT", `/api/prompts/${greeting.id}/labels/canary`, {
      token,
      body: { versionId: v2.id },
    });
    expect(moved.status).toBe(200);
    const canary = await openai.chat.completions.create({
      model: `kiln/${greeting.name}@canary`,
      messages: [],
      variables: { person: "Ada" },
    } as never);
    expect(canary.choices[0]?.message.content).toContain("goodbye to Ada");
    // Without a label: still the published version.
    const live = await openai.chat.completions.create({
      model: `kiln/${greeting.name}`,
      messages: [],
      variables: { person: "Ada" },
    } as never);
    expect(live.choices[0]?.message.content).toContain("Greet Ada");
  });

  itFull("answers the JSON of the prompt's own schema (the prompt has an attached manual_stub tool)", async () => {
    // The caller may send the prompt's own schema (any other one is a 400: openai-compatible-requests.test.ts).
    const data = await openai.chat.completions.create({
      model: `kiln/${forecast.id}`,
      messages: [],
      variables: { city: "Paris" },
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "forecast",
          schema: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] },
        },
      },
    } as never);
    const parsed = JSON.parse(data.choices[0]?.message.content ?? "");
    expect(typeof parsed.summary).toBe("string");
  });

  itFull("runs a skill as kiln/skill/<name>", async () => {
    const data = await openai.chat.completions.create({
      model: `kiln/skill/${skill.name}`,
      messages: [],
      variables: { city: "Oslo" },
    } as never);
    expect(data.id).toMatch(/^srun_[0-9a-f]{32}$/);
    // A stored run like any other: read back through the runs API.
    const stored = await call(running.base, "GET", `/api/skill-runs/${data.id}`, { token: flow.token });
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({
      id: data.id,
      skillId: skill.id,
      status: "succeeded",
      input: { input: { city: "Oslo" } },
      // The forecast prompt's attached manual_stub tool ran inside Kiln.
      toolCallCount: 1,
    });
    expect(typeof JSON.parse(data.choices[0]?.message.content ?? "").summary).toBe("string");
    // A skill runs with its prompts' own settings: a prompt-only field is a 400 naming it.
    const error = await openai.chat.completions
      .create({
        model: `kiln/skill/${skill.name}`,
        messages: [],
        variables: { city: "Oslo" },
        temperature: 0.5,
      } as never)
      .then(
        () => null,
        (e) => e,
      );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe("temperature");
  });

  itFull("streams the completed run in chunks, with usage when asked", async () => {
    const stream = await openai.chat.completions.create({
      model: `kiln/${greeting.id}`,
      messages: [],
      variables: { person: "Lovelace" },
      stream: true,
      stream_options: { include_usage: true },
    } as never);
    let text = "";
    const ids = new Set<string>();
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) {
      expect(chunk.object).toBe("chat.completion.chunk");
      ids.add(chunk.id);
      const choice = chunk.choices[0];
      if (choice?.delta.content) text += choice.delta.content;
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(RUN_ID);
    expect(text).toContain("Lovelace");
    expect(finish).toBe("stop");
    expect(usage?.total_tokens).toBeGreaterThan(0);
  });

  itFull("takes an access token with the organization in OpenAI-Organization", async () => {
    const asUser = new OpenAI({
      apiKey: flow.token,
      organization: flow.organizationId,
      baseURL: `${running.base}/v1`,
      maxRetries: 0,
    });
    const data = await asUser.chat.completions.create({
      model: `kiln/${greeting.name}`,
      messages: [],
      variables: { person: "Ada" },
    } as never);
    expect(data.id).toMatch(RUN_ID);
    const withoutOrganization = new OpenAI({ apiKey: flow.token, baseURL: `${running.base}/v1`, maxRetries: 0 });
    const error = await withoutOrganization.models.list().then(
      () => null,
      (e) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("refuses a bad key with 401 invalid_api_key", async () => {
    const bad = new OpenAI({ apiKey: "sk_bad", baseURL: `${running.base}/v1`, maxRetries: 0 });
    const error = await bad.chat.completions.create({ model: `kiln/${greeting.id}`, messages: [] }).then(
      () => null,
      (e) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error.status).toBe(401);
    expect(error.code).toBe("invalid_api_key");
    expect(error.type).toBe("invalid_request_error");
  });

  it("names a missing variable with 400", async () => {
    const error = await openai.chat.completions
      .create({ model: `kiln/${greeting.id}`, messages: [], variables: {} } as never)
      .then(
        () => null,
        (e) => e,
      );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.status).toBe(400);
    expect(error.message).toContain("person");
    expect(error.type).toBe("invalid_request_error");
  });

  itFull("answers 404 model_not_found for an unknown prompt, label or non-Kiln model", async () => {
    for (const model of ["kiln/no such prompt", `kiln/${greeting.id}@staging`, "gpt-4o"]) {
      const error = await openai.chat.completions.create({ model, messages: [] }).then(
        () => null,
        (e) => e,
      );
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error.code).toBe("model_not_found");
      expect(error.param).toBe("model");
    }
    const unknownRoute = await call(running.base, "GET", "/v1/embeddings", { token: flow.apiKey });
    expect(unknownRoute.status).toBe(404);
    expect(unknownRoute.body).toEqual({
      error: { message: "Invalid URL (GET /v1/embeddings)", type: "invalid_request_error", param: null, code: null },
    });
  });

  it("appends the caller's messages after the prompt's own", async () => {
    const data = await openai.chat.completions.create({
      model: `kiln/${greeting.id}`,
      messages: [
        { role: "user", content: "First question about Babbage" },
        { role: "assistant", content: "An earlier answer" },
        { role: "user", content: [{ type: "text", text: "Second question about engines" }] },
      ],
      variables: { person: "Ada" },
    } as never);
    const text = data.choices[0]?.message.content ?? "";
    // local/echo answers the system, then the user contents, in order.
    expect(text.indexOf("Greet Ada warmly.")).toBe(0);
    expect(text.indexOf("First question about Babbage")).toBeGreaterThan(0);
    expect(text.indexOf("Second question about engines")).toBeGreaterThan(text.indexOf("First question about Babbage"));
  });

  itFull("refuses legacy function messages and legacy functions with 400 naming the parameter", async () => {
    const messages = await openai.chat.completions
      .create({
        model: `kiln/${greeting.id}`,
        messages: [{ role: "function", name: "f", content: "hi" }],
        variables: { person: "A" },
      } as never)
      .then(
        () => null,
        (e) => e,
      );
    expect(messages).toBeInstanceOf(OpenAI.BadRequestError);
    expect(messages.param).toBe("messages[0].role");
    const functions = await openai.chat.completions
      .create({
        model: `kiln/${greeting.id}`,
        messages: [],
        variables: { person: "A" },
        functions: [{ name: "f", parameters: { type: "object" } }],
      } as never)
      .then(
        () => null,
        (e) => e,
      );
    expect(functions).toBeInstanceOf(OpenAI.BadRequestError);
    expect(functions.param).toBe("functions");
  });

  itFull("local/echo calls a caller tool, and answers with its result on the round trip", async () => {
    const tools = [{ type: "function" as const, function: { name: "lookup", parameters: { type: "object" } } }];
    const first = await openai.chat.completions.create({
      model: `kiln/${greeting.id}`,
      messages: [{ role: "system", content: "Caller rules." }],
      variables: { person: "Ada" },
      tools,
    } as never);
    const call = first.choices[0]?.message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    expect(call.function.name).toBe("lookup");
    const second = await openai.chat.completions.create({
      model: `kiln/${greeting.id}`,
      messages: [
        { role: "system", content: "Caller rules." },
        first.choices[0]?.message,
        { role: "tool", tool_call_id: call.id, content: "looked up: 42" },
      ],
      variables: { person: "Ada" },
      tools,
    } as never);
    // local/echo answers the system messages (the prompt's, then the caller's), then the tool result.
    expect(second.choices[0]?.message.content).toBe("Greet Ada warmly.\n\nCaller rules.\n\nlooked up: 42");
    expect(second.choices[0]?.finish_reason).toBe("stop");
  });

  itFull("sends no CORS headers unless origins are configured", async () => {
    const answer = await fetch(`${running.base}/v1/models`, {
      headers: { origin: "https://app.example.com", authorization: `Bearer ${flow.apiKey}` },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
  });

  itFull("lists published prompts and skills as models", async () => {
    const ids: string[] = [];
    for await (const model of openai.models.list()) {
      expect(model.object).toBe("model");
      // A prompt's, a skill's or a connection's model is its organization's; the deployment's, its provider's.
      if (model.id.startsWith("kiln/")) expect(model.owned_by).toBe(flow.organizationId);
      expect(model.created).toBeGreaterThan(0);
      ids.push(model.id);
    }
    expect(ids).toEqual(
      expect.arrayContaining([`kiln/${greeting.id}`, `kiln/${forecast.id}`, `kiln/skill/${skill.id}`]),
    );
  });
});

describe("OpenAI-compatible endpoint rate limit", () => {
  it("answers 429 rate_limit_exceeded in OpenAI's shape", async () => {
    const { kiln, baseUrl } = await startEmbedded({ rateLimitPerMinute: 12 });
    try {
      const flow = await runIdentityFlow(baseUrl);
      const openai = new OpenAI({ apiKey: flow.apiKey, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
      let error: Loose = null;
      for (let i = 0; i < 20 && !error; i++) {
        error = await openai.models.list().then(
          () => null,
          (e) => e,
        );
      }
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      expect(error.status).toBe(429);
      expect(error.code).toBe("rate_limit_exceeded");
      expect(error.type).toBe("requests");
    } finally {
      await kiln.close();
    }
  });
});

describe("OpenAI-compatible endpoint over a provider (the OpenAI stub), distributed", () => {
  it("answers the provider's text, and a failed run with 502 naming the stored run", async () => {
    const stub = await startOpenAIStub({});
    const kiln = await startDistributed({
      mongoUrl: inject("mongoUrl"),
      natsUrl: inject("natsUrl"),
      envOf: {
        execution: {
          OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
            { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "m", inputPerMTokUsd: 0, outputPerMTokUsd: 0 }] },
          ]),
        },
      },
    });
    const baseUrl = kiln.gatewayUrl;
    try {
      const flow = await runIdentityFlow(baseUrl);
      const client = createTestClient(baseUrl);
      const { prompt } = await client.createPublishedPrompt(flow.token, flow.organizationId, {
        model: "stub/m",
        systemPrompt: "Be terse.",
      });
      const openai = new OpenAI({ apiKey: flow.apiKey, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
      stub.script(stubReply.text("Stubbed answer", { usage: { prompt_tokens: 7, completion_tokens: 2 } }));
      const data = await openai.chat.completions.create({
        model: `kiln/${prompt.id}`,
        messages: [{ role: "user", content: "Hello there" }],
      });
      expect(data.choices[0]?.message.content).toBe("Stubbed answer");
      // Kiln's extension: the run's estimated cost (the model's price here is 0).
      expect(data.usage).toEqual({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9, cost_usd: 0 });
      // The provider saw the prompt's system message, then the caller's.
      expect(stub.requests.at(-1)?.body.messages).toEqual([
        { role: "system", content: "Be terse." },
        { role: "user", content: "Hello there" },
      ]);
      stub.script(stubReply.error(400, { message: "bad request upstream" }));
      const { error, runId } = await openai.chat.completions
        .create({ model: `kiln/${prompt.id}`, messages: [] })
        .withResponse()
        .then(
          () => ({ error: null, runId: null }),
          (e) => ({ error: e, runId: e.headers?.get("x-kiln-run-id") }),
        );
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error.status).toBe(502);
      expect(error.type).toBe("api_error");
      expect(runId).toMatch(RUN_ID);
      // The run is stored: a retry would only run again.
      expect(error.headers.get("x-should-retry")).toBe("false");
    } finally {
      await kiln.stop();
      await stub.close();
    }
  });
});
