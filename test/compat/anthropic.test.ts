/**
 * Client compatibility: the official `@anthropic-ai/sdk` (pinned in test/package.json) against
 * Kiln's `POST /v1/messages` on the embedded and the distributed platform
 * (docs/anthropic-compatible.md). The model provider is the OpenAI stub, so each test also asserts
 * what reached the provider and what the stored run holds.
 */

import Anthropic from "@anthropic-ai/sdk";
import { stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/identity-flow.js";
import { COMPAT_MODES, type CompatPlatform, OSLO_ROUND_TRIP_SENT, startCompatPlatform } from "./harness.js";

// biome-ignore lint/suspicious/noExplicitAny: SDK errors and stored runs are read loosely and asserted on.
type Loose = any;

const failure = (p: Promise<unknown>): Promise<Loose> =>
  p.then(
    () => null,
    (e) => e,
  );

/** A 1×1 PNG, base64. */
const PIXEL_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const LOOKUP: Anthropic.Tool = {
  name: "lookup",
  description: "Looks a city up",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/** Kiln's variables ride in `metadata` (the SDK's type names only `user_id`; its body passes any key). */
const withVariables = (variables: Record<string, unknown>) =>
  ({ user_id: "user-7", variables: JSON.stringify(variables) }) as Anthropic.Metadata;

describe.each(COMPAT_MODES)("@anthropic-ai/sdk against the %s platform", (mode) => {
  let p: CompatPlatform;
  let anthropic: Anthropic;

  beforeAll(async () => {
    p = await startCompatPlatform(mode);
    anthropic = new Anthropic({ apiKey: p.flow.apiKey, baseURL: p.base, maxRetries: 0 });
  }, 120_000);
  afterAll(async () => p?.stop());

  /** `messages.stream` of one user message to the `free` prompt: the text pieces as they come, and the final message. */
  const streamOf = (content: string) => {
    const stream = anthropic.messages.stream({
      model: `kiln/${p.prompts.free.id}`,
      max_tokens: 128,
      messages: [{ role: "user", content }],
    });
    const pieces: string[] = [];
    stream.on("text", (text) => pieces.push(text));
    return { pieces, final: stream.finalMessage() };
  };

  it("answers a message: the system after the prompt's own, text, end_turn and the usage", async () => {
    p.stub.script(stubReply.text("Bonjour", { usage: { prompt_tokens: 11, completion_tokens: 3 } }));
    const { data, response } = await anthropic.messages
      .create({
        model: `kiln/${p.prompts.free.name}`,
        max_tokens: 256,
        system: "Answer in French.",
        messages: [{ role: "user", content: [{ type: "text", text: "Hello" }] }],
        temperature: 0.2,
        stop_sequences: ["END"],
        thinking: { type: "disabled" },
      } as Anthropic.MessageCreateParamsNonStreaming)
      .withResponse();
    const runId = response.headers.get("x-kiln-run-id");
    expect(data).toMatchObject({
      id: `msg_${runId}`,
      type: "message",
      role: "assistant",
      model: `kiln/${p.prompts.free.name}`,
      content: [{ type: "text", text: "Bonjour" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 11, output_tokens: 3 },
    });
    expect(p.lastSent().messages).toEqual([
      { role: "system", content: "You are Kiln's helper." },
      { role: "system", content: "Answer in French." },
      { role: "user", content: "Hello" },
    ]);
    expect(p.lastSent()).toMatchObject({ temperature: 0.2, stop: ["END"] });
    expect(p.lastSent().max_tokens ?? p.lastSent().max_completion_tokens).toBe(256);
    const stored = await p.run(runId ?? "");
    expect(stored.output).toEqual({ text: "Bonjour" });
  });

  it("streams with messages.stream: the text as it comes, the final message and its usage", async () => {
    p.stub.script(stubReply.text("A streamed answer in words", { usage: { prompt_tokens: 4, completion_tokens: 6 } }));
    const { pieces, final } = streamOf("Stream please");
    const message = await final;
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe("A streamed answer in words");
    expect(message.content).toEqual([{ type: "text", text: "A streamed answer in words", citations: null }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage).toMatchObject({ input_tokens: 4, output_tokens: 6 });
    const stored = await p.run(message.id.replace(/^msg_/, ""));
    expect(stored.status).toBe("succeeded");
    expect(stored.output).toEqual({ text: pieces.join("") });
  });

  it("streams with create({stream: true}): Anthropic's event sequence", async () => {
    p.stub.script(stubReply.text("one two", { usage: { prompt_tokens: 2, completion_tokens: 2 } }));
    const events = await anthropic.messages.create({
      model: `kiln/${p.prompts.free.id}`,
      max_tokens: 64,
      messages: [{ role: "user", content: "Go" }],
      stream: true,
    });
    const seen: Loose[] = [];
    for await (const event of events) seen.push(event);
    const types = seen.map((e) => e.type);
    expect(types[0]).toBe("message_start");
    expect(types[1]).toBe("content_block_start");
    expect(types.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    expect(new Set(types.slice(2, -3))).toEqual(new Set(["content_block_delta"]));
    const text = seen
      .filter((e) => e.type === "content_block_delta")
      .map((e) => e.delta.text)
      .join("");
    expect(text).toBe("one two");
    expect(seen.at(-2)).toMatchObject({ delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } });
  });

  it("runs a managed prompt with variables in metadata, and the version a label points at", async () => {
    const greeting = p.prompts.greeting;
    p.stub.script(stubReply.text("ok"));
    await anthropic.messages.create({
      model: `kiln/${greeting.name}`,
      max_tokens: 32,
      messages: [{ role: "user", content: "Hi" }],
      metadata: withVariables({ person: "Ada" }),
    });
    expect(p.lastSent().messages[0]).toEqual({ role: "system", content: "Help Ada." });

    const v2 = await createTestClient(p.base).createPromptVersion(p.flow.token, greeting.id, {
      model: "stub/m",
      systemPrompt: "Say goodbye to {{person}}.",
      variablesSchema: { type: "object", properties: { person: { type: "string" } }, required: ["person"] },
    });
    const moved = await call(p.base, "PUT", `/api/prompts/${greeting.id}/labels/canary`, {
      token: p.flow.token,
      body: { versionId: v2.id },
    });
    expect(moved.status).toBe(200);
    p.stub.script(stubReply.text("bye"));
    await anthropic.messages.create({
      model: `kiln/${greeting.name}@canary`,
      max_tokens: 32,
      messages: [{ role: "user", content: "Hi" }],
      metadata: withVariables({ person: "Grace" }),
    });
    expect(p.lastSent().messages[0]).toEqual({ role: "system", content: "Say goodbye to Grace." });

    const missing = await failure(
      anthropic.messages.create({ model: `kiln/${greeting.name}`, max_tokens: 32, messages: [] }),
    );
    expect(missing).toBeInstanceOf(Anthropic.BadRequestError);
    expect(missing.type).toBe("invalid_request_error");
    expect(missing.message).toContain("person");
  });

  it("takes a tool use round trip: tool_use blocks out, tool_result blocks back", async () => {
    p.stub.script(stubReply.toolCalls([{ id: "call_1", name: "lookup", arguments: { city: "Oslo" } }]));
    const first = await anthropic.messages.create({
      model: `kiln/${p.prompts.tool.id}`,
      max_tokens: 200,
      messages: [{ role: "user", content: "Trip to Oslo" }],
      tools: [LOOKUP],
      tool_choice: { type: "tool", name: "lookup" },
    });
    expect(p.lastSent().tools.map((t: Loose) => t.function.name)).toEqual([expect.stringMatching(/^tool_/), "lookup"]);
    expect(p.lastSent().tool_choice).toEqual({ type: "function", function: { name: "lookup" } });
    expect(first.stop_reason).toBe("tool_use");
    expect(first.content).toEqual([{ type: "tool_use", id: "call_1", name: "lookup", input: { city: "Oslo" } }]);

    p.stub.script(stubReply.text("Oslo is cold"));
    const second = await anthropic.messages.create({
      model: `kiln/${p.prompts.tool.id}`,
      max_tokens: 200,
      tools: [LOOKUP],
      messages: [
        { role: "user", content: "Trip to Oslo" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: '{"tempC":-3}' }] },
      ],
    });
    expect(second.content).toEqual([{ type: "text", text: "Oslo is cold", citations: null }]);
    expect(p.lastSent().messages.slice(1)).toEqual(OSLO_ROUND_TRIP_SENT);
  });

  it("passes image blocks to a model that takes images, as image_url parts in the message's order", async () => {
    p.stub.script(stubReply.text("A cat."));
    const data = await anthropic.messages.create({
      model: `kiln/${p.prompts.free.id}`,
      max_tokens: 64,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is in " },
            { type: "image", source: { type: "base64", media_type: "image/png", data: PIXEL_BASE64 } },
            { type: "text", text: "and " },
            { type: "image", source: { type: "url", url: "https://images.example.com/cat.png" } },
          ],
        },
      ],
    });
    expect(data.content).toEqual([{ type: "text", text: "A cat.", citations: null }]);
    expect(p.lastSent().messages[1]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "What is in " },
        { type: "image_url", image_url: { url: `data:image/png;base64,${PIXEL_BASE64}` } },
        { type: "text", text: "and " },
        { type: "image_url", image_url: { url: "https://images.example.com/cat.png" } },
      ],
    });
    const refused = await failure(
      anthropic.messages.create({
        model: `kiln/${p.prompts.textOnly.id}`,
        max_tokens: 64,
        messages: [
          { role: "user", content: [{ type: "image", source: { type: "url", url: "https://x.example/a.png" } }] },
        ],
      }),
    );
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect(refused.message).toContain("messages[0].content[0]");
  });

  it("streams a tool call as a tool_use block with its input", async () => {
    p.stub.script(stubReply.toolCalls([{ id: "call_2", name: "lookup", arguments: { city: "Rome" } }]));
    const message = await anthropic.messages
      .stream({
        model: `kiln/${p.prompts.tool.id}`,
        max_tokens: 200,
        messages: [{ role: "user", content: "Trip to Rome" }],
        tools: [LOOKUP],
      })
      .finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([{ type: "tool_use", id: "call_2", name: "lookup", input: { city: "Rome" } }]);
  });

  it("answers Anthropic's typed errors: not_found_error, authentication_error, invalid_request_error", async () => {
    const unknown = await failure(
      anthropic.messages.create({ model: "kiln/no-such-prompt", max_tokens: 8, messages: [] }),
    );
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    expect(unknown.status).toBe(404);
    expect(unknown.type).toBe("not_found_error");
    expect(unknown.error).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    expect(unknown.requestID).toEqual(expect.any(String));

    const stranger = new Anthropic({ apiKey: "sk_nope_nope", baseURL: p.base, maxRetries: 0 });
    const badKey = await failure(
      stranger.messages.create({ model: `kiln/${p.prompts.free.id}`, max_tokens: 8, messages: [] }),
    );
    expect(badKey).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(badKey.status).toBe(401);
    expect(badKey.type).toBe("authentication_error");

    const before = p.stub.requests.length;
    const bad = await failure(
      anthropic.messages.create({
        model: `kiln/${p.prompts.free.id}`,
        max_tokens: 8,
        top_k: 3,
        messages: [{ role: "user", content: "x" }],
      } as Anthropic.MessageCreateParamsNonStreaming),
    );
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect(bad.type).toBe("invalid_request_error");
    expect(bad.message).toContain("top_k");
    expect(p.stub.requests.length).toBe(before);

    // A Messages route Kiln does not serve: Anthropic's 404.
    const counting = await failure(
      anthropic.messages.countTokens({
        model: `kiln/${p.prompts.free.id}`,
        messages: [{ role: "user", content: "x" }],
      }),
    );
    expect(counting).toBeInstanceOf(Anthropic.NotFoundError);
    expect(counting.type).toBe("not_found_error");
  });

  it("a provider failure is one stored failed run: the SDK's default retries obey x-should-retry", async () => {
    const retrying = new Anthropic({ apiKey: p.flow.apiKey, baseURL: p.base }); // maxRetries: 2 (default)
    const failedBefore = (await p.runs("failed")).length;
    const sentBefore = p.stub.requests.length;
    p.stub.script(stubReply.error(400, { message: "bad request upstream" }));
    const error = await failure(
      retrying.messages.create({
        model: `kiln/${p.prompts.free.id}`,
        max_tokens: 8,
        messages: [{ role: "user", content: "x" }],
      }),
    );
    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    expect(error.status).toBe(502);
    expect(error.type).toBe("api_error");
    expect(p.stub.requests.length).toBe(sentBefore + 1);
    const failed = await p.runs("failed");
    expect(failed.length).toBe(failedBefore + 1);
    expect(failed[0]?.id).toBe(error.headers.get("x-kiln-run-id"));
  });

  it("ends a stream that breaks off midway with an error event, which the SDK throws", async () => {
    p.stub.script(stubReply.text("one two three four five six", { chunkDelayMs: 20, breakAfterChunks: 3 }));
    const { pieces, final } = streamOf("Break");
    const error = await failure(final);
    expect(pieces.join("")).toBe("one two three ");
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(error.type).toBe("api_error");
    expect(error.error.error.kiln_run_id).toEqual(expect.any(String));
    const stored = await p.run(error.error.error.kiln_run_id);
    expect(stored.status).toBe("failed");
  });

  it("lists and retrieves the prompts with models.list and models.retrieve, errors in Anthropic's shape", async () => {
    const models: Anthropic.ModelInfo[] = [];
    for await (const model of anthropic.models.list()) models.push(model);
    for (const prompt of Object.values(p.prompts)) {
      expect(models.find((m) => m.id === `kiln/${prompt.id}`)).toMatchObject({
        type: "model",
        display_name: prompt.name,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
    }
    const one = await anthropic.models.retrieve(`kiln/${p.prompts.greeting.name}`);
    expect(one).toMatchObject({ id: `kiln/${p.prompts.greeting.name}`, type: "model" });
    const missing = await failure(anthropic.models.retrieve("kiln/no-such-prompt"));
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    expect(missing.type).toBe("not_found_error");
    const stranger = new Anthropic({ apiKey: "sk_nope_nope", baseURL: p.base, maxRetries: 0 });
    const badKey = await failure(stranger.models.list());
    expect(badKey).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(badKey.type).toBe("authentication_error");
  });
});
