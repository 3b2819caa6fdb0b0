import { describe, expect, it } from "vitest";
import { chatRequestOf, openAiParamOf } from "./openai-chat-request.js";
import { OpenAiHttpError } from "./openai-errors.js";

const paramOf = (body: Record<string, unknown>) => {
  try {
    chatRequestOf({ model: "kiln/p", messages: [], ...body });
  } catch (e) {
    expect(e).toBeInstanceOf(OpenAiHttpError);
    return (e as OpenAiHttpError).body.error.param;
  }
  throw new Error("expected a 400");
};

describe("chatRequestOf", () => {
  it("maps an OpenAI request onto a prompt run", () => {
    const request = chatRequestOf({
      model: "kiln/p",
      messages: [
        { role: "system", content: "s" },
        { role: "user", content: [{ type: "text", text: "u" }] },
        {
          role: "assistant",
          content: null,
          refusal: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
        },
        { role: "tool", tool_call_id: "c1", content: "r" },
      ],
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
      tool_choice: { type: "function", function: { name: "f" } },
      response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } },
      temperature: 0.1,
      max_tokens: 9,
      stop: ["a"],
      seed: 3,
      n: 1,
      stream: true,
      stream_options: { include_usage: true },
      metadata: { variables: '{"city":"Oslo"}' },
      user: null,
    });
    expect(request.variables).toEqual({ city: "Oslo" });
    expect(request.stream).toBe(true);
    expect(request.includeUsage).toBe(true);
    expect(request.run.messages).toEqual([
      { role: "system", content: "s" },
      { role: "user", content: "u" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "f", arguments: expect.anything() }] },
      { role: "tool", content: "r", toolCallId: "c1" },
    ]);
    expect(request.run.tools?.[0]?.name).toBe("f");
    expect(request.run.toolChoice).toEqual({ mode: "tool", name: "f" });
    expect(JSON.parse(request.run.responseFormat?.json ?? "")).toEqual({
      type: "json_schema",
      name: "x",
      schema: { type: "object" },
    });
    expect(request.run.parameters).toMatchObject({ temperature: 0.1, maxOutputTokens: 9, stop: ["a"], seed: 3n });
  });

  it("refuses what it cannot honour, naming the field", () => {
    expect(paramOf({ n: 3 })).toBe("n");
    expect(paramOf({ functions: [] })).toBe("functions");
    expect(paramOf({ something_new: 1 })).toBe("something_new");
    expect(paramOf({ store: false })).toBe("store");
    expect(paramOf({ modalities: ["text", "audio"] })).toBe("modalities");
    expect(paramOf({ stream_options: { include_obfuscation: true } })).toBe("stream_options.include_obfuscation");
    expect(paramOf({ variables: { a: 1 }, metadata: { variables: { a: 1 } } })).toBe("metadata.variables");
    expect(paramOf({ tools: [{ type: "custom", custom: { name: "x" } }] })).toBe("tools[0].type");
    expect(paramOf({ tool_choice: { type: "allowed_tools" } })).toBe("tool_choice");
    expect(paramOf({ messages: [{ role: "user", content: "x", name: "bob" }] })).toBe("messages[0].name");
    expect(
      paramOf({
        messages: [
          { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{" } }] },
        ],
      }),
    ).toBe("messages[0].tool_calls[0].function.arguments");
  });

  it('takes a stock client\'s empty defaults, user "" and metadata {}, as not sent', () => {
    const request = chatRequestOf({ model: "kiln/p", messages: [], user: "", metadata: {}, variables: { a: 1 } });
    expect(request.variables).toEqual({ a: 1 });
    expect(chatRequestOf({ model: "kiln/p", messages: [], metadata: {} }).variables).toEqual({});
    expect(paramOf({ user: "someone" })).toBe("user");
    expect(paramOf({ metadata: { team: "x" } })).toBe("metadata.team");
  });
});

describe("openAiParamOf", () => {
  it("names the run request's fields as the OpenAI request does", () => {
    const request = chatRequestOf({ model: "kiln/p", messages: [], max_tokens: 5 });
    expect(openAiParamOf("parameters.maxOutputTokens", request)).toBe("max_tokens");
    expect(openAiParamOf("parameters.topP", request)).toBe("top_p");
    expect(openAiParamOf("parameters.temperature", request)).toBe("temperature");
    expect(openAiParamOf("tools[2].name", request)).toBe("tools[2].function.name");
    expect(openAiParamOf("toolChoice.name", request)).toBe("tool_choice");
    expect(openAiParamOf("responseFormat", request)).toBe("response_format");
    expect(openAiParamOf("messages[1].toolCallId", request)).toBe("messages[1].tool_call_id");
    expect(openAiParamOf("variables.city", request)).toBe("variables.city");
  });
});
