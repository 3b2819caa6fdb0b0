import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { jsonText } from "@kiln/kit/json-text";
import { RunSchema } from "@kiln/proto/execution";
import { describe, expect, it } from "vitest";
import { type RunDelta, writeResponseEvents } from "./openai-responses-stream.js";

const base = { id: "run_1", createdAt: { seconds: 1_700_000_000n } };
const started = create(RunSchema, { ...base, status: "running" });
const finished = (fields: Pick<MessageInitShape<typeof RunSchema>, "output" | "usage" | "estimatedCostUsd">) =>
  create(RunSchema, { ...base, status: "succeeded", ...fields });

async function* deltas(...items: RunDelta[]): AsyncIterable<RunDelta> {
  for (const item of items) yield item;
}

/** The events written, parsed back from their Server-Sent Events text. */
async function eventsOf(source: AsyncIterable<RunDelta>) {
  let text = "";
  await writeResponseEvents(started, "kiln/p", source, (chunk) => {
    text += chunk;
  });
  return text
    .trim()
    .split("\n\n")
    .map((block) => {
      const [event, data] = block.split("\n");
      const parsed = JSON.parse(data?.slice("data: ".length) ?? "");
      expect(event).toBe(`event: ${parsed.type}`);
      return parsed;
    });
}

describe("writeResponseEvents", () => {
  it("writes text in several deltas, then a tool call, then the completed response", async () => {
    const run = finished({
      output: jsonText({ text: "Hello there", toolCalls: [{ id: "call_1", name: "lookup", input: { city: "Oslo" } }] }),
      usage: { inputTokens: 3n, outputTokens: 4n },
      estimatedCostUsd: 0.5,
    });
    const events = await eventsOf(
      deltas(
        { type: "text", delta: "Hello" },
        { type: "text", delta: " there" },
        { type: "tool_call", id: "call_1", name: "lookup", arguments: '{"city":"Oslo"}' },
        { type: "done", run },
      ),
    );
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events[0].response).toMatchObject({ id: "run_1", status: "in_progress", created_at: 1_700_000_000 });
    expect(events[6]).toMatchObject({ item_id: "msg_run_1", output_index: 0, text: "Hello there" });
    expect(events[9]).toMatchObject({
      output_index: 1,
      item: { type: "function_call", call_id: "call_1", arguments: "" },
    });
    expect(events[11]).toMatchObject({ item_id: "fc_call_1", name: "lookup", arguments: '{"city":"Oslo"}' });
    const response = events.at(-1).response;
    expect(response.output.map((item: { type: string }) => item.type)).toEqual(["message", "function_call"]);
    expect(response.usage).toMatchObject({ input_tokens: 3, output_tokens: 4, total_tokens: 7, cost_usd: 0.5 });
  });

  it("closes the open message and answers response.failed when the run failed", async () => {
    const run = create(RunSchema, {
      ...base,
      status: "failed",
      error: { code: "provider_error", message: "upstream 500" },
    });
    const events = await eventsOf(deltas({ type: "text", delta: "Hel" }, { type: "done", run }));
    expect(events.map((e) => e.type).slice(-4)).toEqual([
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.failed",
    ]);
    expect(events.at(-1).response).toMatchObject({
      id: "run_1",
      status: "failed",
      error: { code: "provider_error", message: "upstream 500" },
    });
  });

  it("answers response.incomplete for an answer cut by the token limit, and an empty answer's message", async () => {
    const run = finished({ output: jsonText({ text: "", finishReason: "length" }) });
    const events = await eventsOf(deltas({ type: "done", run }));
    expect(events.map((e) => e.type).slice(2)).toEqual([
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.incomplete",
    ]);
    expect(events.at(-1).response).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
    });
  });
});
