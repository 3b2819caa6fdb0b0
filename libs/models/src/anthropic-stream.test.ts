import { type AnthropicStub, anthropicReply, startAnthropicStub } from "@kiln/testing/anthropic-stub";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAnthropicProvider } from "./anthropic-provider.js";
import { readMessageStream } from "./anthropic-stream.js";
import { type ModelDelta, type ModelRequest, ProviderError } from "./provider.js";
import { BrokenStreamError } from "./remote-call.js";

let stub: AnthropicStub;
beforeAll(async () => {
  stub = await startAnthropicStub({});
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

const provider = () =>
  createAnthropicProvider({ id: "anthropic", apiKey: "k", baseUrl: stub.baseUrl, timeoutMs: 5_000, maxRetries: 1 });

function streamed(extra: Partial<ModelRequest> = {}) {
  const deltas: ModelDelta[] = [];
  const call = provider().generate({
    model: "claude-haiku-4-5",
    messages: [{ role: "user", content: "hi" }],
    onDelta: (d) => deltas.push(d),
    ...extra,
  });
  return { call, deltas };
}

describe("createAnthropicProvider: a streamed turn", () => {
  it("asks for the stream, hands on text deltas, and resolves to the whole turn with the final usage", async () => {
    stub.script(
      anthropicReply.text("Sunny and warm today.", {
        usage: { input_tokens: 10, cache_read_input_tokens: 100, output_tokens: 6 },
      }),
    );
    const { call, deltas } = streamed();
    const result = await call;
    expect(stub.requests[0]?.body.stream).toBe(true);
    expect(stub.requests[0]?.headers.accept).toBe("text/event-stream");
    expect(deltas).toEqual([
      { type: "text", text: "Sunny " },
      { type: "text", text: "and " },
      { type: "text", text: "warm " },
      { type: "text", text: "today." },
    ]);
    expect(result).toMatchObject({
      text: "Sunny and warm today.",
      finishReason: "stop",
      usage: { inputTokens: 110, cachedInputTokens: 100, cacheWriteInputTokens: 0, outputTokens: 6 },
    });
  });

  it("streams tool calls (id and name first, then the input's JSON) and keeps thinking out of the text", async () => {
    const thinking = { thinking: "Two lookups needed.", signature: "c2lnbmF0dXJl" };
    stub.script(
      anthropicReply.toolUse(
        [
          { id: "toolu_a", name: "weather", input: { city: "Paris" } },
          { id: "toolu_b", name: "weather", input: { city: "Rome" } },
        ],
        { thinking, usage: { thinking_tokens: 5 } },
      ),
    );
    const { call, deltas } = streamed({ reasoning: { budgetTokens: 1024 } });
    const result = await call;
    expect(deltas.filter((d) => d.type === "text")).toEqual([]);
    const first = deltas.filter((d) => d.type === "tool_call" && d.index === 0);
    expect(first[0]).toEqual({ type: "tool_call", index: 0, id: "toolu_a", name: "weather", arguments: "" });
    expect(first.map((d) => (d as { arguments: string }).arguments).join("")).toBe('{"city":"Paris"}');
    expect(deltas.some((d) => d.type === "tool_call" && d.index === 1 && d.id === "toolu_b")).toBe(true);
    expect(result.finishReason).toBe("tool_calls");
    expect(result.toolCalls).toEqual([
      { id: "toolu_a", name: "weather", input: { city: "Paris" } },
      { id: "toolu_b", name: "weather", input: { city: "Rome" } },
    ]);
    expect(result.reasoning).toEqual({ provider: "anthropic", data: [{ type: "thinking", ...thinking }] });
    expect(result.usage.reasoningTokens).toBe(5);
  });

  it("fails with provider_error on an error event mid-stream, after the pieces already handed on", async () => {
    stub.script(
      anthropicReply.text("one two three four", {
        errorAfterDeltas: { deltas: 2, type: "overloaded_error", message: "Overloaded" },
      }),
    );
    const { call, deltas } = streamed();
    const e = await call.catch((error: unknown) => error);
    expect(e).toBeInstanceOf(ProviderError);
    expect((e as ProviderError).message).toBe(
      "anthropic: the stream ended with an error: overloaded_error: Overloaded",
    );
    expect(deltas).toHaveLength(2);
    expect(stub.requests).toHaveLength(1);
  });

  it("fails with provider_error when the stream breaks off before message_stop", async () => {
    stub.script(anthropicReply.text("one two three", { breakAfterDeltas: 1 }));
    const { call } = streamed();
    const e = await call.catch((error: unknown) => error);
    expect(e).toBeInstanceOf(ProviderError);
    expect((e as ProviderError).kind).toBe("provider_error");
  });

  it("retries a 529 before the stream starts", async () => {
    stub.script(anthropicReply.overloaded({ retryAfterSeconds: 0 }), anthropicReply.text("ok"));
    const { call, deltas } = streamed();
    expect(await call).toMatchObject({ text: "ok", retries: 1 });
    expect(deltas).toEqual([{ type: "text", text: "ok" }]);
  });
});

describe("readMessageStream", () => {
  const body = (text: string) =>
    (async function* () {
      yield new TextEncoder().encode(text);
    })();
  const event = (data: unknown) => `event: ${(data as { type: string }).type}\ndata: ${JSON.stringify(data)}\n\n`;
  const start = {
    type: "message_start",
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-haiku-4-5",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 25, cache_creation_input_tokens: 7, cache_read_input_tokens: 0, output_tokens: 1 },
    },
  };

  it("ignores pings, assembles blocks by index and takes message_delta's cumulative usage", async () => {
    const text = [
      event(start),
      event({ type: "ping" }),
      event({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      event({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } }),
      event({ type: "ping" }),
      event({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: " there" } }),
      event({ type: "content_block_stop", index: 0 }),
      event({
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 15 },
      }),
      event({ type: "message_stop" }),
    ].join("");
    const deltas: ModelDelta[] = [];
    const message = await readMessageStream(body(text), (d) => deltas.push(d));
    expect(message.content).toEqual([{ type: "text", text: "Hi there" }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage).toMatchObject({ input_tokens: 25, cache_creation_input_tokens: 7, output_tokens: 15 });
    expect(deltas).toHaveLength(2);
  });

  it("refuses a tool input that is not JSON, an event that is not JSON, and a stream without message_stop", async () => {
    const bad = [
      event(start),
      event({
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "t", name: "x", input: {} },
      }),
      event({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"a":' } }),
      event({ type: "content_block_stop", index: 0 }),
    ].join("");
    await expect(readMessageStream(body(bad), () => {})).rejects.toEqual(
      new BrokenStreamError('tool "x" was called with arguments that are not JSON'),
    );
    await expect(readMessageStream(body("event: message_start\ndata: {nope\n\n"), () => {})).rejects.toBeInstanceOf(
      BrokenStreamError,
    );
    await expect(readMessageStream(body(event(start)), () => {})).rejects.toEqual(
      new BrokenStreamError("the stream ended before the answer did"),
    );
  });
});
