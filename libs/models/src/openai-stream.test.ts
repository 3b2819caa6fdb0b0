import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIProvider } from "./openai-provider.js";
import { readChatStream } from "./openai-stream.js";
import { type ModelDelta, ProviderError } from "./provider.js";
import { BrokenStreamError } from "./remote-call.js";

/** A body delivered in the given byte pieces (SSE frames and characters cut anywhere). */
async function* bodyOf(...pieces: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const piece of pieces) yield typeof piece === "string" ? new TextEncoder().encode(piece) : piece;
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;

describe("readChatStream", () => {
  it("hands each piece on and assembles text, usage and finish reason, across cut frames and characters", async () => {
    const deltas: ModelDelta[] = [];
    const euro = new TextEncoder().encode(chunk({ content: "5 €" }));
    const cut = euro.indexOf(0xe2) + 1; // inside the euro sign's three bytes
    const text = chunk({ role: "assistant", content: "" }) + chunk({ content: "Costs " });
    const completion = await readChatStream(
      bodyOf(
        text.slice(0, 30),
        text.slice(30),
        euro.slice(0, cut),
        euro.slice(cut),
        chunk({}, "stop"),
        `data: ${JSON.stringify({ id: "c1", choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } })}\n\n`,
        "data: [DONE]\n\n",
      ),
      (d) => deltas.push(d),
    );
    expect(deltas).toEqual([
      { type: "text", text: "Costs " },
      { type: "text", text: "5 €" },
    ]);
    expect(completion.choices[0]?.message.content).toBe("Costs 5 €");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
  });

  it("assembles interleaved tool calls by index", async () => {
    const deltas: ModelDelta[] = [];
    const call = (index: number, fn: Record<string, unknown>, id?: string) =>
      chunk({ tool_calls: [{ index, ...(id ? { id, type: "function" } : {}), function: fn }] });
    const completion = await readChatStream(
      bodyOf(
        call(0, { name: "weather", arguments: "" }, "call_a"),
        call(1, { name: "time", arguments: '{"tz"' }, "call_b"),
        call(0, { arguments: '{"city":' }),
        call(1, { arguments: ':"UTC"}' }),
        call(0, { arguments: '"Paris"}' }),
        chunk({}, "tool_calls"),
      ),
      (d) => deltas.push(d),
    );
    expect(completion.choices[0]?.message.tool_calls).toEqual([
      { id: "call_a", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
      { id: "call_b", type: "function", function: { name: "time", arguments: '{"tz":"UTC"}' } },
    ]);
    expect(completion.choices[0]?.message.content).toBeNull();
    expect(deltas[0]).toEqual({ type: "tool_call", index: 0, id: "call_a", name: "weather", arguments: "" });
    expect(deltas[2]).toEqual({ type: "tool_call", index: 0, arguments: '{"city":' });
  });

  it("refuses an error event, a chunk that is not JSON, and a stream that stops before the answer ends", async () => {
    const read = (...pieces: string[]) => readChatStream(bodyOf(...pieces), () => undefined);
    await expect(read(chunk({ content: "a" }), `data: {"error":{"message":"overloaded"}}\n\n`)).rejects.toThrow(
      new BrokenStreamError("the stream ended with an error: overloaded"),
    );
    await expect(read("data: {not json\n\n")).rejects.toBeInstanceOf(BrokenStreamError);
    await expect(read(chunk({ content: "a" }))).rejects.toThrow("the stream ended before the answer did");
  });
});

describe("createOpenAIProvider streaming (onDelta) against the stub", () => {
  let stub: OpenAIStub;
  beforeAll(async () => {
    stub = await startOpenAIStub({});
  });
  afterAll(() => stub.close());
  beforeEach(() => stub.reset());
  const provider = () => createOpenAIProvider({ id: "stub", baseUrl: stub.baseUrl, timeoutMs: 5_000, maxRetries: 2 });

  it("asks for a stream with usage, hands the pieces on as they come, and answers the whole turn", async () => {
    stub.script(stubReply.text("a b c", { usage: { prompt_tokens: 4, completion_tokens: 3 }, chunkDelayMs: 20 }));
    const seen: { text: string; atMs: number }[] = [];
    const result = await provider().generate({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      onDelta: (d) => {
        if (d.type === "text") seen.push({ text: d.text, atMs: stub.now() });
      },
    });
    expect(stub.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(seen.map((s) => s.text)).toEqual(["a ", "b ", "c"]);
    // The first piece was handed on before the stub sent the last one.
    expect(seen[0]?.atMs).toBeLessThan(stub.streams[0]?.lastChunkAtMs ?? 0);
    expect(result).toMatchObject({ text: "a b c", usage: { inputTokens: 4, outputTokens: 3 }, finishReason: "stop" });
  });

  it("reads cached and reasoning tokens from the streamed usage chunk", async () => {
    stub.script(
      stubReply.text("a b", {
        usage: {
          prompt_tokens: 1200,
          completion_tokens: 80,
          prompt_tokens_details: { cached_tokens: 1024 },
          completion_tokens_details: { reasoning_tokens: 64 },
        },
      }),
    );
    const result = await provider().generate({ model: "m", messages: [], onDelta: () => undefined });
    expect(result.usage).toEqual({ inputTokens: 1200, outputTokens: 80, cachedInputTokens: 1024, reasoningTokens: 64 });
  });

  it("retries before the stream starts, and fails a stream that breaks off as provider_error", async () => {
    stub.script(stubReply.serverError({ retryAfterMs: 1 }), stubReply.text("x y", { chunkDelayMs: 1 }));
    const retried = await provider().generate({ model: "m", messages: [], onDelta: () => undefined });
    expect(retried).toMatchObject({ text: "x y", retries: 1 });

    stub.script(stubReply.text("one two three", { chunkDelayMs: 20, breakAfterChunks: 1 }));
    const error = await provider()
      .generate({ model: "m", messages: [], onDelta: () => undefined })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe("provider_error");
    // Not retried once the answer had started.
    expect(stub.requests).toHaveLength(3); // 2 for the first call, 1 for this one
  });

  it("rejects with the caller's reason when aborted mid-stream, and the stub sees the call go", async () => {
    stub.script(stubReply.text("one two three four", { chunkDelayMs: 30 }));
    const controller = new AbortController();
    const reason = new Error("client gone");
    const call = provider().generate({
      model: "m",
      messages: [],
      signal: controller.signal,
      onDelta: () => controller.abort(reason),
    });
    await expect(call).rejects.toBe(reason);
    await expect.poll(() => stub.streams[0]?.closedEarly).toBe(true);
  });
});
