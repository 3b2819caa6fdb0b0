/**
 * The stub's Responses API is faithful to OpenAI's as far as the official SDK can tell: the pinned
 * `openai` client calls `responses.create` and `responses.stream` on it as it would on
 * api.openai.com, and reads back `Response` objects and `ResponseStreamEvent`s (the stub builds
 * them with the SDK's types, so a wrong field fails to compile), with function calls, usage
 * details, incomplete and failed responses, errors and retries.
 */
import OpenAI from "openai";
import type { Response, ResponseStreamEvent } from "openai/resources/responses/responses";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type OpenAIStub, startOpenAIStub, stubReply } from "./openai-stub.js";

const API_KEY = "sk-responses-sdk-check";
let stub: OpenAIStub;
let client: OpenAI;

beforeAll(async () => {
  stub = await startOpenAIStub({ apiKey: API_KEY });
  client = new OpenAI({ apiKey: API_KEY, baseURL: stub.baseUrl, maxRetries: 2 });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

const USAGE = {
  prompt_tokens: 2006,
  completion_tokens: 300,
  prompt_tokens_details: { cached_tokens: 1920 },
  completion_tokens_details: { reasoning_tokens: 192 },
};

describe("the OpenAI stub's Responses API, through the official SDK", () => {
  it("answers responses.create with a Response the SDK reads, reasoning item and usage details included", async () => {
    stub.script(stubReply.text("Hi there!", { usage: USAGE }));
    const response: Response = await client.responses.create({
      model: "o3-pro",
      instructions: "Be kind.",
      input: [{ role: "user", content: [{ type: "input_text", text: "Hello" }] }],
      store: false,
    });
    expect(response).toMatchObject({
      object: "response",
      status: "completed",
      model: "o3-pro",
      instructions: "Be kind.",
      output_text: "Hi there!",
      usage: {
        input_tokens: 2006,
        input_tokens_details: { cached_tokens: 1920 },
        output_tokens: 300,
        output_tokens_details: { reasoning_tokens: 192 },
        total_tokens: 2306,
      },
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    const [sent] = stub.requests;
    expect(sent?.path).toBe("/v1/responses");
    expect(sent?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent?.body).toMatchObject({ model: "o3-pro", store: false });
  });

  it("echoes the last user input once the script is empty", async () => {
    const response = await client.responses.create({ model: "gpt-5-codex", input: "Say this back" });
    expect(response.output_text).toBe("Say this back");
  });

  it("answers function calls as function_call items with call_id and JSON arguments", async () => {
    stub.script(stubReply.toolCalls([{ id: "call_w", name: "get_weather", arguments: { city: "Paris" } }]));
    const response = await client.responses.create({
      model: "o3-pro",
      input: "Weather in Paris?",
      tools: [{ type: "function", name: "get_weather", parameters: { type: "object" }, strict: false }],
    });
    expect(response.output).toMatchObject([
      { type: "function_call", call_id: "call_w", name: "get_weather", arguments: '{"city":"Paris"}' },
    ]);
    expect(response.output_text).toBe("");
  });

  it("says why a response is incomplete, and fails a failed one", async () => {
    stub.script(stubReply.text("cut sho", { finishReason: "length" }), stubReply.failed("model crashed"));
    const cut = await client.responses.create({ model: "o3-pro", input: "x", max_output_tokens: 3 });
    expect(cut).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      max_output_tokens: 3,
    });
    const failed = await client.responses.create({ model: "o3-pro", input: "x" });
    expect(failed).toMatchObject({ status: "failed", error: { code: "server_error", message: "model crashed" } });
  });

  it("streams the real event sequence, which the SDK's ResponseStream assembles", async () => {
    stub.script(
      stubReply.text("Let me look.", { usage: USAGE }),
      stubReply.toolCalls([{ id: "call_l", name: "lookup", arguments: { q: "kiln" } }]),
    );
    const stream = client.responses.stream({ model: "o3-pro", input: "Look it up" });
    const events: ResponseStreamEvent[] = [];
    const texts: string[] = [];
    stream.on("event", (e) => events.push(e));
    stream.on("response.output_text.delta", (e) => texts.push(e.delta));
    const response = await stream.finalResponse();
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(texts.join("")).toBe("Let me look.");
    expect(response).toMatchObject({ status: "completed", output_text: "Let me look.", usage: { input_tokens: 2006 } });

    const calls = client.responses.stream({ model: "o3-pro", input: "Look it up" });
    const args: string[] = [];
    calls.on("response.function_call_arguments.delta", (e) => args.push(e.delta));
    const called = await calls.finalResponse();
    expect(args.join("")).toBe('{"q":"kiln"}');
    expect(called.output).toMatchObject([{ type: "function_call", call_id: "call_l", arguments: '{"q":"kiln"}' }]);
    expect(stub.requests.map((r) => r.body.stream)).toEqual([true, true]);
  });

  it("streams response.failed for a failed response", async () => {
    stub.script(stubReply.failed("overloaded", "server_error"));
    const stream = await client.responses.create({ model: "o3-pro", input: "x", stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(["response.created", "response.in_progress", "response.failed"]);
  });

  it("sends errors the SDK maps to its classes, retries 429 and 500 as the SDK does, and refuses a bad key", async () => {
    stub.script(stubReply.rateLimited({ retryAfterMs: 10 }), stubReply.serverError({ retryAfterMs: 10 }));
    stub.script(stubReply.text("after two retries"));
    const response = await client.responses.create({ model: "o3-pro", input: "x" });
    expect(response.output_text).toBe("after two retries");
    expect(stub.requests).toHaveLength(3);

    stub.script(
      stubReply.error(400, { message: "Unsupported parameter: 'temperature'", code: "unsupported_parameter" }),
    );
    const bad = await client.responses.create({ model: "o3-pro", input: "x", temperature: 1 }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad).toMatchObject({ status: 400, code: "unsupported_parameter", type: "invalid_request_error" });

    const wrong = new OpenAI({ apiKey: "sk-nope", baseURL: stub.baseUrl, maxRetries: 0 });
    await expect(wrong.responses.create({ model: "o3-pro", input: "x" })).rejects.toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
  });
});
