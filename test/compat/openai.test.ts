/**
 * Client compatibility: the `openai` npm SDK (pinned in test/package.json) against Kiln's Chat
 * Completions on the embedded and the distributed platform (docs/openai-compatible.md "Clients").
 * The provider is the OpenAI stub, so each test also asserts what reached the provider.
 */

import { stubReply } from "@kiln/testing/openai-stub";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ALLOWED_ORIGIN,
  COMPAT_MODES,
  type CompatPlatform,
  OSLO_ROUND_TRIP_SENT,
  SUMMARY_SCHEMA,
  startCompatPlatform,
} from "./harness.js";

// biome-ignore lint/suspicious/noExplicitAny: SDK errors are read loosely and asserted on.
type Loose = any;

const failure = (p: Promise<unknown>): Promise<Loose> =>
  p.then(
    () => null,
    (e) => e,
  );

/** A 1×1 PNG as a data URL. */
const PIXEL =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const LOOKUP: OpenAI.ChatCompletionFunctionTool = {
  type: "function",
  function: {
    name: "lookup",
    description: "Looks a city up",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

describe.each(COMPAT_MODES)("openai SDK against the %s platform", (mode) => {
  let p: CompatPlatform;
  let openai: OpenAI;

  beforeAll(async () => {
    p = await startCompatPlatform(mode);
    openai = new OpenAI({ apiKey: p.flow.apiKey, baseURL: `${p.base}/v1`, maxRetries: 0 });
  }, 120_000);
  afterAll(async () => p?.stop());

  it("sends system and developer messages after the prompt's own", async () => {
    p.stub.script(stubReply.text("Bonjour"));
    const data = await openai.chat.completions.create({
      model: `kiln/${p.prompts.free.name}`,
      messages: [
        { role: "system", content: "Answer in French." },
        { role: "developer", content: "No emojis." },
        { role: "user", content: "Hello" },
      ],
    });
    expect(data.choices[0]?.message.content).toBe("Bonjour");
    expect(p.lastSent().messages).toEqual([
      { role: "system", content: "You are Kiln's helper." },
      { role: "system", content: "Answer in French." },
      { role: "developer", content: "No emojis." },
      { role: "user", content: "Hello" },
    ]);
  });

  it("offers caller tools with tool_choice and takes the tool_calls → tool message round trip", async () => {
    p.stub.script(stubReply.toolCalls([{ id: "call_1", name: "lookup", arguments: { city: "Oslo" } }]));
    const first = await openai.chat.completions.create({
      model: `kiln/${p.prompts.tool.id}`,
      messages: [{ role: "user", content: "Trip to Oslo" }],
      tools: [LOOKUP],
      tool_choice: { type: "function", function: { name: "lookup" } },
    });
    expect(p.lastSent().tools.map((t: Loose) => t.function.name)).toEqual([expect.stringMatching(/^tool_/), "lookup"]);
    expect(p.lastSent().tool_choice).toEqual({ type: "function", function: { name: "lookup" } });
    const message = first.choices[0]?.message;
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    expect(message?.tool_calls).toEqual([
      { id: "call_1", type: "function", function: { name: "lookup", arguments: '{"city":"Oslo"}' } },
    ]);
    const stored = await p.run(first.id);
    expect(stored.output.toolCalls).toEqual([{ id: "call_1", name: "lookup", input: { city: "Oslo" } }]);

    p.stub.script(stubReply.text("Oslo is cold"));
    const second = await openai.chat.completions.create({
      model: `kiln/${p.prompts.tool.id}`,
      messages: [
        { role: "user", content: "Trip to Oslo" },
        message as OpenAI.ChatCompletionAssistantMessageParam,
        { role: "tool", tool_call_id: "call_1", content: '{"tempC":-3}' },
      ],
      tools: [LOOKUP],
    });
    expect(second.choices[0]?.message.content).toBe("Oslo is cold");
    expect(p.lastSent().messages.slice(1)).toEqual(OSLO_ROUND_TRIP_SENT);
  });

  it("honours response_format json_schema on a prompt without one", async () => {
    p.stub.script(stubReply.json({ summary: "short" }));
    const data = await openai.chat.completions.create({
      model: `kiln/${p.prompts.free.id}`,
      messages: [{ role: "user", content: "Summarize this" }],
      response_format: { type: "json_schema", json_schema: { name: "mine", schema: SUMMARY_SCHEMA } },
    });
    expect(JSON.parse(data.choices[0]?.message.content ?? "")).toEqual({ summary: "short" });
    expect(p.lastSent().response_format).toMatchObject({
      type: "json_schema",
      json_schema: { name: "mine", schema: SUMMARY_SCHEMA },
    });
  });

  it("passes temperature, max_tokens, stop and seed to the provider", async () => {
    p.stub.script(stubReply.text("fine"));
    await openai.chat.completions.create({
      model: `kiln/${p.prompts.free.id}`,
      messages: [{ role: "user", content: "Hi" }],
      temperature: 0.2,
      max_tokens: 17,
      stop: ["END", "STOP"],
      seed: 11,
    });
    const sent = p.lastSent();
    expect(sent.max_tokens ?? sent.max_completion_tokens).toBe(17);
    expect(sent).toMatchObject({ temperature: 0.2, stop: ["END", "STOP"], seed: 11 });
  });

  it("refuses n: 2 with a 400 naming n, without calling the provider", async () => {
    const before = p.stub.requests.length;
    const error = await failure(
      openai.chat.completions.create({ model: `kiln/${p.prompts.free.id}`, messages: [], n: 2 }),
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe("n");
    expect(p.stub.requests.length).toBe(before);
  });

  it("takes the variables from metadata.variables", async () => {
    p.stub.script(stubReply.text("ok"));
    await openai.chat.completions.create({
      model: `kiln/${p.prompts.greeting.name}`,
      messages: [{ role: "user", content: "Hi" }],
      metadata: { variables: JSON.stringify({ person: "Ada" }) },
    });
    expect(p.lastSent().messages[0]).toEqual({ role: "system", content: "Help Ada." });
  });

  it("streams the answer, assembled equal to the stored run's output", async () => {
    p.stub.script(stubReply.text("A streamed answer in words", { usage: { prompt_tokens: 3, completion_tokens: 5 } }));
    const stream = await openai.chat.completions.create({
      model: `kiln/${p.prompts.free.id}`,
      messages: [{ role: "user", content: "Stream please" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let id = "";
    let usage: Loose = null;
    for await (const chunk of stream) {
      id = chunk.id;
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe("A streamed answer in words");
    expect(usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 });
    const stored = await p.run(id);
    expect(stored.status).toBe("succeeded");
    expect(stored.output).toEqual({ text });
  });

  it("passes image_url parts to a model that takes images; 400 naming the part for one that does not", async () => {
    const models = await fetch(`${p.base}/api/models`, { headers: { authorization: `Bearer ${p.flow.apiKey}` } });
    const catalog: Loose = await models.json();
    const inputOf = (id: string) => catalog.data.find((m: Loose) => m.id === id)?.capabilities.input;
    expect(inputOf("stub/m")).toEqual(["text", "image"]);
    expect(inputOf("stub/t")).toEqual(["text"]);

    const content: OpenAI.ChatCompletionContentPart[] = [
      { type: "text", text: "What is in " },
      { type: "image_url", image_url: { url: "https://images.example.com/cat.png", detail: "low" } },
      { type: "text", text: "and " },
      { type: "image_url", image_url: { url: PIXEL } },
    ];
    p.stub.script(stubReply.text("A cat."));
    const data = await openai.chat.completions.create({
      model: `kiln/${p.prompts.free.id}`,
      messages: [{ role: "user", content }],
    });
    expect(data.choices[0]?.message.content).toBe("A cat.");
    expect(p.lastSent().messages[1]).toEqual({ role: "user", content });
    const stored = await p.run(data.id);
    expect(stored.input.messages[0]).toMatchObject({ role: "user", content: "What is in and " });

    const before = p.stub.requests.length;
    const refused = await failure(
      openai.chat.completions.create({ model: `kiln/${p.prompts.textOnly.id}`, messages: [{ role: "user", content }] }),
    );
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused.param).toBe("messages[0].content[1]");
    expect(refused.message).toContain("stub/t");
    const badUrl = await failure(
      openai.chat.completions.create({
        model: `kiln/${p.prompts.free.id}`,
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "ftp://x/y.png" } }] }],
      }),
    );
    expect(badUrl).toBeInstanceOf(OpenAI.BadRequestError);
    expect(badUrl.param).toBe("messages[0].content[0].image_url.url");
    expect(p.stub.requests.length).toBe(before);
  });

  it("answers an unknown model with 404 model_not_found", async () => {
    const error = await failure(openai.chat.completions.create({ model: "kiln/no-such-prompt", messages: [] }));
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.code).toBe("model_not_found");
    expect(error.param).toBe("model");
  });

  it("a provider failure is one stored failed run: the SDK's default retries obey x-should-retry", async () => {
    const retrying = new OpenAI({ apiKey: p.flow.apiKey, baseURL: `${p.base}/v1` }); // maxRetries: 2 (default)
    const failedBefore = (await p.runs("failed")).length;
    const sentBefore = p.stub.requests.length;
    p.stub.script(stubReply.error(400, { message: "bad request upstream" }));
    const error = await failure(
      retrying.chat.completions.create({
        model: `kiln/${p.prompts.free.id}`,
        messages: [{ role: "user", content: "x" }],
      }),
    );
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error.status).toBe(502);
    expect(error.headers.get("x-should-retry")).toBe("false");
    expect(p.stub.requests.length).toBe(sentBefore + 1);
    const failed = await p.runs("failed");
    expect(failed.length).toBe(failedBefore + 1);
    expect(failed[0]?.id).toBe(error.headers.get("x-kiln-run-id"));
  });

  it("lists and retrieves the prompts as models", async () => {
    const ids: string[] = [];
    for await (const model of openai.models.list()) ids.push(model.id);
    for (const prompt of Object.values(p.prompts)) expect(ids).toContain(`kiln/${prompt.id}`);
    const model = await openai.models.retrieve(`kiln/${p.prompts.greeting.name}`);
    expect(model).toMatchObject({
      id: `kiln/${p.prompts.greeting.name}`,
      object: "model",
      owned_by: p.flow.organizationId,
    });
  });

  it("answers a CORS preflight from the allowed origin, and not from another", async () => {
    const preflight = (origin: string) =>
      fetch(`${p.base}/v1/chat/completions`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization,content-type,x-stainless-os",
        },
      });
    const allowed = await preflight(ALLOWED_ORIGIN);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN);
    expect(allowed.headers.get("access-control-allow-methods")).toContain("POST");
    const refused = await preflight("https://evil.example.com");
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    // The SDK in a browser page (dangerouslyAllowBrowser) reads the exposed headers.
    const res = await fetch(`${p.base}/v1/models`, {
      headers: { origin: ALLOWED_ORIGIN, authorization: `Bearer ${p.flow.apiKey}` },
    });
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN);
    expect(res.headers.get("access-control-expose-headers")).toContain("x-should-retry");
  });
});
