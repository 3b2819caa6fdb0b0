/**
 * Model runs (docs/openai-compatible.md "Models"): a model id that is not `kiln/…` on /v1 runs
 * that model directly with the caller's messages, through the published clients (openai,
 * @anthropic-ai/sdk), in both run modes, against a provider stub that records what it was sent:
 * the deployment's model and an organization's connection model are listed in /v1/models and
 * answer, plain and streamed; the stub receives the caller's messages, tools, response format and
 * sampling as sent; each call is a stored run of kind "model" (GET /api/runs/:id, the runs list's
 * kind filter); another organization neither lists nor runs the connection's model; an unknown
 * model is 404 model_not_found, variables are a 400, and neither reaches the provider.
 */
import Anthropic from "@anthropic-ai/sdk";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { PROVIDER_MODES, type RunningKiln } from "./support/provider-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: answers are read loosely and asserted on.
type Loose = any;

const SCOPES = ["prompts:read", "skills:read", "runs:write", "runs:read"];

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected a failure");
    },
    (e) => e,
  );

describe.each(PROVIDER_MODES)("model runs in $name", (mode) => {
  let stub: OpenAIStub;
  let running: RunningKiln;
  let flow: FlowResult;
  let other: FlowResult;
  let openai: OpenAI;
  const connectionModel = "direct-acme/llama-3";

  const runOf = async (id: string | null, token = flow.token): Promise<Loose> => {
    const r = await call(running.base, "GET", `/api/runs/${id}`, { token });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };

  beforeAll(async () => {
    stub = await startOpenAIStub({ models: ["llama-3"] });
    const providers = [
      { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "m", inputPerMTokUsd: 1, outputPerMTokUsd: 2 }] },
    ];
    running = await mode.start({
      OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify(providers),
      PROVIDER_PRIVATE_HOSTS: "127.0.0.1",
    });
    flow = await runIdentityFlow(running.base, SCOPES);
    other = await runIdentityFlow(running.base, SCOPES);
    const created = await call(running.base, "POST", "/api/provider-connections", {
      token: flow.token,
      body: {
        organizationId: flow.organizationId,
        name: "direct-acme",
        provider: "openai_compatible",
        apiKey: "sk-direct-0123456789abcdef",
        baseUrl: stub.baseUrl,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    openai = new OpenAI({ apiKey: flow.apiKey, baseURL: `${running.base}/v1`, maxRetries: 0 });
  }, 180_000);

  afterAll(async () => {
    await running?.stop();
    await stub?.close();
  });

  it("lists the deployment's and the organization's connection models beside its prompts, and retrieves them", async () => {
    const ids: string[] = [];
    for await (const model of openai.models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining(["stub/m", connectionModel]));
    expect(await openai.models.retrieve(connectionModel)).toMatchObject({
      id: connectionModel,
      object: "model",
      owned_by: flow.organizationId,
    });
    expect(await openai.models.retrieve("stub/m")).toMatchObject({ id: "stub/m", owned_by: "stub" });
    const theirs = new OpenAI({ apiKey: other.apiKey, baseURL: `${running.base}/v1`, maxRetries: 0 });
    const theirIds: string[] = [];
    for await (const model of theirs.models.list()) theirIds.push(model.id);
    expect(theirIds).toContain("stub/m");
    expect(theirIds).not.toContain(connectionModel);
    const missing = await failure(theirs.models.retrieve(connectionModel));
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("sends the caller's messages, tools, response format and sampling to the model as they are, and stores a model run", async () => {
    stub.reset();
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: "system", content: "You answer in one word." },
      { role: "user", content: "What is the capital of France?" },
    ];
    const { data, response } = await openai.chat.completions
      .create({ model: "stub/m", messages, temperature: 0.3, max_tokens: 50, user: "" })
      .withResponse();
    expect(data.model).toBe("stub/m");
    expect(data.choices[0]?.message.content).toBe("What is the capital of France?");
    const sent = stub.requests.at(-1)?.body;
    expect(sent.model).toBe("m");
    expect(sent.messages).toEqual(messages);
    expect(sent.temperature).toBe(0.3);
    const run = await runOf(response.headers.get("x-kiln-run-id"));
    expect(run).toMatchObject({
      kind: "model",
      status: "succeeded",
      model: "stub/m",
      organizationId: flow.organizationId,
      output: { text: "What is the capital of France?" },
    });
    expect(run.id).toMatch(/^mrun_/);
    expect(run.input.messages).toHaveLength(2);
    expect(run.input.variables).toBeUndefined();
    expect(run.promptId).toBeUndefined();
    expect(run.estimatedCostUsd).toBeGreaterThan(0);

    const weather = {
      type: "function" as const,
      function: { name: "weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
    };
    stub.script(stubReply.toolCalls([{ id: "call_1", name: "weather", arguments: { city: "Paris" } }]));
    const tools = await openai.chat.completions.create({
      model: connectionModel,
      messages: [{ role: "user", content: "Weather in Paris?" }],
      tools: [weather],
      response_format: { type: "json_object" },
    });
    expect(tools.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      function: { name: "weather", arguments: '{"city":"Paris"}' },
    });
    const toolRequest = stub.requests.at(-1);
    expect(toolRequest?.headers.authorization).toBe("Bearer sk-direct-0123456789abcdef");
    expect(toolRequest?.body.model).toBe("llama-3");
    expect(toolRequest?.body.tools?.[0]?.function.name).toBe("weather");
    expect(toolRequest?.body.response_format).toEqual({ type: "json_object" });
  });

  it("streams a model run with the OpenAI SDK and answers the Anthropic SDK on /v1/messages", async () => {
    const stream = await openai.chat.completions.create({
      model: connectionModel,
      messages: [{ role: "user", content: "stream me" }],
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("stream me");

    const anthropic = new Anthropic({ apiKey: flow.apiKey, baseURL: running.base, maxRetries: 0 });
    const { data, response } = await anthropic.messages
      .create({
        model: "stub/m",
        max_tokens: 64,
        system: "Be brief.",
        messages: [{ role: "user", content: "hello from Anthropic" }],
      })
      .withResponse();
    expect(data.content[0]).toMatchObject({ type: "text", text: "hello from Anthropic" });
    expect(stub.requests.at(-1)?.body.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "hello from Anthropic" },
    ]);
    expect((await runOf(response.headers.get("x-kiln-run-id"))).kind).toBe("model");

    const listed = await call(running.base, "GET", `/api/runs?organizationId=${flow.organizationId}&kind=model`, {
      token: flow.token,
    });
    expect(listed.status).toBe(200);
    const kinds = new Set((listed.body.data as { kind: string }[]).map((r) => r.kind));
    expect([...kinds]).toEqual(["model"]);
    expect(listed.body.data.length).toBeGreaterThanOrEqual(4);
  });

  it("refuses what a model run cannot take before any provider call, and never runs another organization's connection", async () => {
    const before = stub.requests.length;
    const unknown = await failure(
      openai.chat.completions.create({ model: "stub/nope", messages: [{ role: "user", content: "x" }] }),
    );
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown.code).toBe("model_not_found");
    expect(unknown.param).toBe("model");
    const withVariables = await failure(
      openai.chat.completions.create({
        model: "stub/m",
        messages: [{ role: "user", content: "x" }],
        variables: { city: "Paris" },
      } as never),
    );
    expect(withVariables).toBeInstanceOf(OpenAI.BadRequestError);
    expect(withVariables.param).toBe("variables");
    const empty = await failure(openai.chat.completions.create({ model: "stub/m", messages: [] }));
    expect(empty).toBeInstanceOf(OpenAI.BadRequestError);
    expect(empty.param).toBe("messages");
    const theirs = new OpenAI({ apiKey: other.apiKey, baseURL: `${running.base}/v1`, maxRetries: 0 });
    const stranger = await failure(
      theirs.chat.completions.create({ model: connectionModel, messages: [{ role: "user", content: "x" }] }),
    );
    expect(stranger).toBeInstanceOf(OpenAI.NotFoundError);
    expect(stub.requests.length).toBe(before);
  });
});
