import { create } from "@bufbuild/protobuf";
import { jsonText } from "@kiln/kit/json-text";
import { type Run, RunSchema } from "@kiln/proto/execution";
import { describe, expect, it } from "vitest";
import { HttpError } from "../errors.js";
import { anthropicErrorOf } from "./anthropic-errors.js";
import { anthropicUsageOf, messageOf } from "./anthropic-messages-answer.js";
import { writeMessageEvents } from "./anthropic-messages-stream.js";
import { failedRunError } from "./openai-chat-answer.js";
import { badRequest, modelNotFound } from "./openai-errors.js";
import { deltasOfRun, type RunDelta } from "./openai-responses-stream.js";

const succeeded = (output: unknown, usage = { inputTokens: 12n, outputTokens: 5n }) =>
  create(RunSchema, { id: "run_1", status: "succeeded", output: jsonText(output), usage, estimatedCostUsd: 0.25 });

/** The events a stream writes (one write each), parsed, each checked against the SSE event name it came under. */
async function eventsOf(started: Pick<Run, "id" | "usage">, deltas: AsyncIterable<RunDelta>) {
  const written: string[] = [];
  await writeMessageEvents(started, "kiln/p", "req-1", deltas, (t) => written.push(t));
  return written.map((t) => {
    const m = /^event: (\w+)\ndata: (.*)\n\n$/s.exec(t);
    const parsed = JSON.parse(m?.[2] ?? "null");
    expect(parsed.type).toBe(m?.[1]);
    return parsed;
  });
}

describe("messageOf", () => {
  it("answers text with end_turn and the usage", () => {
    expect(messageOf(succeeded({ text: "Hi" }), "kiln/p")).toEqual({
      id: "msg_run_1",
      type: "message",
      role: "assistant",
      model: "kiln/p",
      content: [{ type: "text", text: "Hi", citations: null }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: 12,
        output_tokens: 5,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: null,
        cost_usd: 0.25,
      },
    });
  });

  it("answers calls of the caller's tools as tool_use blocks; a cut answer is max_tokens", () => {
    const calls = messageOf(succeeded({ text: "", toolCalls: [{ id: "t1", name: "f", input: { a: 1 } }] }), "m");
    expect(calls.content).toEqual([{ type: "tool_use", id: "t1", name: "f", input: { a: 1 } }]);
    expect(calls.stop_reason).toBe("tool_use");
    expect(messageOf(succeeded({ text: "cut", finishReason: "length" }), "m").stop_reason).toBe("max_tokens");
    expect(messageOf(succeeded({ text: "", json: { a: 1 } }), "m").content).toEqual([
      { type: "text", text: '{"a":1}', citations: null },
    ]);
  });
});

describe("anthropicUsageOf", () => {
  it("leaves the cache reads and writes out of input_tokens, as Anthropic counts them", () => {
    const usage = {
      inputTokens: 100n,
      outputTokens: 40n,
      cachedInputTokens: 60n,
      cacheWriteInputTokens: 30n,
      reasoningTokens: 25n,
    };
    expect(anthropicUsageOf({ usage: usage as unknown as Run["usage"], estimatedCostUsd: undefined })).toEqual({
      input_tokens: 10,
      output_tokens: 40,
      cache_read_input_tokens: 60,
      cache_creation_input_tokens: 30,
      output_tokens_details: { thinking_tokens: 25 },
      cost_usd: null,
    });
    expect(anthropicUsageOf({ usage: undefined, estimatedCostUsd: undefined })).toMatchObject({
      input_tokens: 0,
      output_tokens: 0,
    });
  });
});

describe("writeMessageEvents", () => {
  it("writes Anthropic's event sequence for text and a tool call", async () => {
    const run = succeeded({ text: "Hello", toolCalls: [{ id: "t1", name: "f", input: { a: 1 } }] });
    const live = async function* (): AsyncIterable<RunDelta> {
      yield { type: "text", delta: "Hel" };
      yield { type: "text", delta: "lo" };
      yield { type: "tool_call", id: "t1", name: "f", arguments: '{"a":1}' };
      yield { type: "done", run };
    };
    const events = await eventsOf({ id: "run_1" }, live());
    expect(events.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(events[0].message).toMatchObject({
      id: "msg_run_1",
      content: [],
      stop_reason: null,
      usage: { input_tokens: 0 },
    });
    expect(events[1]).toEqual({
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "", citations: null },
    });
    expect(events[4]).toEqual({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lo" } });
    expect(events[6].content_block).toEqual({ type: "tool_use", id: "t1", name: "f", input: {} });
    expect(events[7]).toEqual({
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: '{"a":1}' },
    });
    expect(events[9]).toMatchObject({
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { input_tokens: 12, output_tokens: 5 },
    });
  });

  it("answers an empty text block for an empty answer, and ends a failed run with an error event", async () => {
    const empty = await eventsOf(succeeded({ text: "" }), deltasOfRun(succeeded({ text: "" })));
    expect(empty.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(empty[0].message.usage).toEqual({ input_tokens: 12, output_tokens: 0 });
    const failed = create(RunSchema, {
      id: "run_2",
      status: "failed",
      error: { code: "provider_error", message: "boom" },
    });
    const broke = async function* (): AsyncIterable<RunDelta> {
      yield { type: "text", delta: "Hal" };
      yield { type: "done", run: failed };
    };
    const events = await eventsOf({ id: "run_2" }, broke());
    expect(events.slice(-2).map((e) => e.type)).toEqual(["content_block_stop", "error"]);
    expect(events.at(-1).error).toMatchObject({ type: "api_error", kiln_run_id: "run_2", should_retry: false });
  });
});

describe("anthropicErrorOf", () => {
  it("answers Anthropic's error types with the statuses, naming a 400's field in its message", () => {
    const bad = anthropicErrorOf(badRequest("must be a number", "temperature"), "req-1");
    expect(bad).toMatchObject({
      status: 400,
      body: {
        type: "error",
        error: { type: "invalid_request_error", message: "temperature: must be a number" },
        request_id: "req-1",
      },
    });
    expect(anthropicErrorOf(modelNotFound("kiln/x"), "r").body.error.type).toBe("not_found_error");
    const failed = create(RunSchema, {
      id: "run_3",
      status: "failed",
      error: { code: "provider_timeout", message: "slow" },
    });
    const timeout = anthropicErrorOf(failedRunError(failed), "r");
    expect(timeout.status).toBe(504);
    expect(timeout.body.error.type).toBe("api_error");
    expect(timeout.headers["x-should-retry"]).toBe("false");
    const statusOf = (code: ConstructorParameters<typeof HttpError>[0]) => {
      const { status, body } = anthropicErrorOf(new HttpError(code, "x"), "r");
      return [status, body.error.type];
    };
    expect(statusOf("unauthenticated")).toEqual([401, "authentication_error"]);
    expect(statusOf("permission_denied")).toEqual([403, "permission_error"]);
    expect(statusOf("resource_exhausted")).toEqual([429, "rate_limit_error"]);
    expect(statusOf("unavailable")).toEqual([503, "overloaded_error"]);
    expect(statusOf("internal")).toEqual([500, "api_error"]);
  });
});
