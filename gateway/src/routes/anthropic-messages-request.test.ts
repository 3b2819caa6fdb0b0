import { jsonText } from "@kiln/kit/json-text";
import { describe, expect, it } from "vitest";
import { messagesRequestOf } from "./anthropic-messages-request.js";
import { OpenAiHttpError } from "./openai-errors.js";

/** The `param` of the 400 a body (over a minimal request) is refused with; undefined when it is taken. */
const paramOf = (body: Record<string, unknown>): string | null | undefined => {
  const outcome = (() => {
    try {
      return messagesRequestOf({ model: "kiln/p", max_tokens: 64, messages: [], ...body });
    } catch (e) {
      return e;
    }
  })();
  return outcome instanceof OpenAiHttpError ? outcome.body.error.param : undefined;
};

describe("messagesRequestOf", () => {
  it("maps a Messages request onto a prompt run: system, blocks, tool use and results, settings", () => {
    const request = messagesRequestOf({
      model: "kiln/p@canary",
      max_tokens: 300,
      system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "user", content: "Trip to Oslo?" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "hmm", signature: "sig" },
            { type: "text", text: "Let me look." },
            { type: "tool_use", id: "toolu_1", name: "lookup", input: { city: "Oslo" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "cold" }], is_error: false },
            { type: "text", text: "And " },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
            { type: "image", source: { type: "url", url: "https://x.example/a.png" } },
          ],
        },
      ],
      tools: [{ name: "lookup", description: "Looks up", input_schema: { type: "object" } }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      temperature: 0.3,
      top_p: 0.9,
      stop_sequences: ["END"],
      metadata: { user_id: "u-1", variables: '{"city":"Oslo"}' },
      thinking: { type: "enabled", budget_tokens: 1024 },
      stream: true,
    });
    expect(request.model).toBe("kiln/p@canary");
    expect(request.stream).toBe(true);
    expect(request.run.variables).toEqual(jsonText({ city: "Oslo" }));
    expect(request.run.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Trip to Oslo?" },
      {
        role: "assistant",
        content: "Let me look.",
        toolCalls: [{ id: "toolu_1", name: "lookup", arguments: jsonText({ city: "Oslo" }) }],
      },
      { role: "tool", content: "cold", toolCallId: "toolu_1" },
      {
        role: "user",
        content: "And ",
        parts: [
          { part: { case: "text", value: "And " } },
          { part: { case: "image", value: { url: "data:image/png;base64,AAAA", detail: "" } } },
          { part: { case: "image", value: { url: "https://x.example/a.png", detail: "" } } },
        ],
      },
    ]);
    expect(request.run.tools).toEqual([
      { name: "lookup", description: "Looks up", parameters: jsonText({ type: "object" }) },
    ]);
    expect(request.run.toolChoice).toEqual({ mode: "required", name: "" });
    expect(request.run.parameters).toEqual({
      temperature: 0.3,
      topP: 0.9,
      maxOutputTokens: 300,
      stop: ["END"],
      parallelToolCalls: false,
    });
    expect(request.promptOnlyField).toBe("tools");
    expect(request.messagesField).toBe("system");
  });

  it("reads the variables as the OpenAI routes do, and a JSON schema output format", () => {
    const request = messagesRequestOf({
      model: "kiln/p",
      max_tokens: 10,
      messages: [{ role: "user", content: "Hi" }],
      variables: { person: "Ada" },
      output_config: { format: { type: "json_schema", schema: { type: "object" } }, effort: "low" },
    });
    expect(request.run.variables).toEqual(jsonText({ person: "Ada" }));
    expect(JSON.parse(request.run.responseFormat?.json ?? "")).toEqual({
      type: "json_schema",
      name: "response",
      schema: { type: "object" },
    });
    // A skill may be sent max_tokens (Anthropic requires it) and empty defaults: nothing prompt-only.
    const skill = messagesRequestOf({
      model: "kiln/skill/s",
      max_tokens: 1024,
      messages: [],
      metadata: {},
      system: "",
    });
    expect(skill.promptOnlyField).toBeUndefined();
    expect(skill.run.messages).toEqual([]);
    expect(
      messagesRequestOf({ model: "kiln/p", messages: [], tool_choice: { type: "tool", name: "f" } }).run.toolChoice,
    ).toEqual({ mode: "tool", name: "f" });
  });

  it("refuses what it cannot honour, naming the field", () => {
    expect(paramOf({ model: "" })).toBe("model");
    expect(paramOf({ top_k: 5 })).toBe("top_k");
    expect(paramOf({ mcp_servers: [] })).toBe("mcp_servers");
    expect(paramOf({ something_new: 1 })).toBe("something_new");
    expect(paramOf({ max_tokens: 0 })).toBe("max_tokens");
    expect(paramOf({ max_tokens: 1.5 })).toBe("max_tokens");
    expect(paramOf({ metadata: { team: "x" } })).toBe("metadata.team");
    expect(paramOf({ variables: { a: 1 }, metadata: { variables: { a: 1 } } })).toBe("metadata.variables");
    expect(paramOf({ messages: [{ role: "system", content: "x" }] })).toBe("messages[0].role");
    expect(paramOf({ messages: [{ role: "user", content: [{ type: "document", source: {} }] }] })).toBe(
      "messages[0].content[0].type",
    );
    expect(paramOf({ messages: [{ role: "assistant", content: [{ type: "image", source: {} }] }] })).toBe(
      "messages[0].content[0].type",
    );
    expect(paramOf({ messages: [{ role: "user", content: [{ type: "image", source: { type: "file" } }] }] })).toBe(
      "messages[0].content[0].source",
    );
    expect(paramOf({ messages: [{ role: "user", content: [{ type: "tool_result", content: "x" }] }] })).toBe(
      "messages[0].content[0].tool_use_id",
    );
    expect(
      paramOf({ messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: 3 }] }] }),
    ).toBe("messages[0].content[0].input");
    expect(paramOf({ tools: [{ type: "web_search_20250305", name: "web_search" }] })).toBe("tools[0].type");
    expect(paramOf({ tools: [{ name: "f" }] })).toBe("tools[0].input_schema");
    expect(paramOf({ tool_choice: { type: "sometimes" } })).toBe("tool_choice.type");
    expect(paramOf({ tool_choice: { type: "tool" } })).toBe("tool_choice.name");
    expect(paramOf({ stop_sequences: "END" })).toBe("stop_sequences");
    expect(paramOf({ output_config: { format: { type: "xml" } } })).toBe("output_config.format.type");
    expect(paramOf({ output_config: { verbosity: 1 } })).toBe("output_config.verbosity");
    expect(paramOf({ thinking: true })).toBe("thinking");
  });

  it("names the run request's fields as the Messages request does", () => {
    const { paramOf: nameOf } = messagesRequestOf({
      system: "s",
      model: "kiln/p",
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: "r" },
            { type: "text", text: "look" },
            { type: "image", source: { type: "url", url: "https://x/y.png" } },
          ],
        },
      ],
    });
    expect(nameOf("messages[0].content")).toBe("system");
    expect(nameOf("messages[1]")).toBe("messages[0]");
    expect(nameOf("messages[2].toolCalls[0].arguments")).toBe("messages[1].content[0].input");
    expect(nameOf("messages[3].toolCallId")).toBe("messages[2].content[0].tool_use_id");
    expect(nameOf("messages[4].parts[1]")).toBe("messages[2].content[2]");
    expect(nameOf("messages[4].parts[1].url")).toBe("messages[2].content[2].source");
    expect(nameOf("parameters.maxOutputTokens")).toBe("max_tokens");
    expect(nameOf("parameters.stop")).toBe("stop_sequences");
    expect(nameOf("toolChoice.name")).toBe("tool_choice");
    expect(nameOf("tools[0].parameters")).toBe("tools[0].input_schema");
  });
});
