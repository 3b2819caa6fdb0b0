/**
 * The stub is faithful to Anthropic's API as far as the official SDK can tell: the `@anthropic-ai/sdk`
 * client (pinned) talks to it as it would to api.anthropic.com, plain and streamed, with tool use,
 * thinking, errors and retries.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AnthropicStub, anthropicReply, startAnthropicStub } from "./anthropic-stub.js";

const API_KEY = "sk-ant-api03-sdk-check";
let stub: AnthropicStub;
let client: Anthropic;

beforeAll(async () => {
  stub = await startAnthropicStub({ apiKey: API_KEY });
  client = new Anthropic({ apiKey: API_KEY, baseURL: stub.baseUrl, maxRetries: 2 });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

const params = {
  model: "claude-haiku-4-5",
  max_tokens: 256,
  messages: [{ role: "user" as const, content: "Hello there" }],
};

describe("the Anthropic stub, through the official SDK", () => {
  it("answers messages.create with a Message the SDK reads, and logs what the SDK sent", async () => {
    stub.script(
      anthropicReply.text("Hi!", { usage: { input_tokens: 9, output_tokens: 2, cache_read_input_tokens: 4 } }),
    );
    const message = await client.messages.create({ ...params, system: "Be kind." });
    expect(message).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-haiku-4-5",
      content: [{ type: "text", text: "Hi!" }],
      stop_reason: "end_turn",
      usage: { input_tokens: 9, output_tokens: 2, cache_read_input_tokens: 4 },
    });
    expect(message.id).toMatch(/^msg_/);
    const [sent] = stub.requests;
    expect(sent?.headers["x-api-key"]).toBe(API_KEY);
    expect(sent?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(sent?.body).toMatchObject({ ...params, system: "Be kind." });
  });

  it("echoes the last user message once the script is empty", async () => {
    const message = await client.messages.create(params);
    expect(message.content).toEqual([{ type: "text", text: "Hello there", citations: null }]);
  });

  it("streams with the real event sequence, which the SDK's MessageStream assembles", async () => {
    stub.script(
      anthropicReply.toolUse([{ id: "toolu_s", name: "lookup", input: { q: "kiln" } }], {
        text: "Let me look.",
        thinking: { thinking: "Search first.", signature: "sig==" },
        usage: { input_tokens: 20, output_tokens: 30 },
      }),
    );
    const stream = client.messages.stream({
      ...params,
      tools: [{ name: "lookup", input_schema: { type: "object", properties: { q: { type: "string" } } } }],
    });
    const events: string[] = [];
    const texts: string[] = [];
    stream.on("streamEvent", (e) => events.push(e.type));
    stream.on("text", (t) => texts.push(t));
    const message = await stream.finalMessage();
    expect(events[0]).toBe("message_start");
    expect(events.at(-1)).toBe("message_stop");
    expect(events.at(-2)).toBe("message_delta");
    expect(events.filter((e) => e === "content_block_start")).toHaveLength(3);
    expect(texts.join("")).toBe("Let me look.");
    expect(message.content).toMatchObject([
      { type: "thinking", thinking: "Search first.", signature: "sig==" },
      { type: "text", text: "Let me look." },
      { type: "tool_use", id: "toolu_s", name: "lookup", input: { q: "kiln" } },
    ]);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.usage).toMatchObject({ input_tokens: 20, output_tokens: 30 });
    expect(stub.requests[0]?.body.stream).toBe(true);
  });

  it("sends errors the SDK maps to its classes, retries 529 and 429 as the SDK does, and refuses a bad key", async () => {
    stub.script(
      anthropicReply.overloaded({ retryAfterSeconds: 0 }),
      anthropicReply.rateLimited({ retryAfterSeconds: 0 }),
    );
    stub.script(anthropicReply.text("after two retries"));
    const message = await client.messages.create(params);
    expect(message.content[0]).toMatchObject({ text: "after two retries" });
    expect(stub.requests).toHaveLength(3);

    stub.script(anthropicReply.error(400, "invalid_request_error", "messages: at least one message is required"));
    const bad = await client.messages.create(params).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect((bad as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error" },
    });

    const wrong = new Anthropic({ apiKey: "nope", baseURL: stub.baseUrl, maxRetries: 0 });
    await expect(wrong.messages.create(params)).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    await expect(wrong.messages.create(params)).rejects.toMatchObject({ status: 401 });
  });

  it("refuses what the API refuses: no max_tokens, no anthropic-version", async () => {
    const response = await fetch(`${stub.baseUrl}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": API_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [] }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    const unversioned = await fetch(`${stub.baseUrl}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": API_KEY, "content-type": "application/json" },
      body: JSON.stringify(params),
    });
    expect(unversioned.status).toBe(400);
    expect(stub.pending()).toBe(0);
  });

  it("lists models in pages the SDK's auto-pagination follows (limit, after_id, has_more, last_id)", async () => {
    const paged = await startAnthropicStub({
      apiKey: API_KEY,
      pageCap: 2,
      models: [{ id: "m-5" }, { id: "m-4" }, { id: "m-3", imageInput: false }, { id: "m-2" }, { id: "m-1" }],
    });
    try {
      const sdk = new Anthropic({ apiKey: API_KEY, baseURL: paged.baseUrl, maxRetries: 0 });
      const seen: string[] = [];
      for await (const info of sdk.models.list({ limit: 3 })) seen.push(info.id);
      expect(seen).toEqual(["m-5", "m-4", "m-3", "m-2", "m-1"]);
      expect(paged.requests.map((r) => r.query)).toEqual([
        { limit: "3" },
        { limit: "3", after_id: "m-4" },
        { limit: "3", after_id: "m-2" },
      ]);
      const page = await sdk.models.list({ limit: 2 });
      expect(page.data[0]).toMatchObject({ type: "model", id: "m-5", display_name: "m-5", lifecycle: "active" });
      expect(page.has_more).toBe(true);
      const third = await sdk.models.retrieve("m-3").catch((e) => e);
      // Only the list is served: one model's route is not.
      expect(third).toBeInstanceOf(Anthropic.NotFoundError);
      const wrongKey = await new Anthropic({ apiKey: "sk-ant-wrong", baseURL: paged.baseUrl, maxRetries: 0 }).models
        .list()
        .catch((e) => e);
      expect(wrongKey).toBeInstanceOf(Anthropic.AuthenticationError);
      const tooMany = await sdk.models.list({ limit: 1001 }).catch((e) => e);
      expect(tooMany).toBeInstanceOf(Anthropic.BadRequestError);
    } finally {
      await paged.close();
    }
  });
});
