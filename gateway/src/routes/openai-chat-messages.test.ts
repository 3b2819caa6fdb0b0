import { describe, expect, it } from "vitest";
import { runMessagesOf } from "./openai-chat-messages.js";
import { OpenAiHttpError } from "./openai-errors.js";

const paramOf = (messages: unknown[]) => {
  try {
    runMessagesOf(messages);
  } catch (e) {
    expect(e).toBeInstanceOf(OpenAiHttpError);
    return (e as OpenAiHttpError).body.error.param;
  }
  throw new Error("expected a 400");
};

describe("runMessagesOf", () => {
  it("keeps a user message's image_url parts in order, its text joined", () => {
    const [message] = runMessagesOf([
      {
        role: "user",
        content: [
          { type: "text", text: "Look at " },
          { type: "image_url", image_url: { url: "https://x.example/a.png", detail: "high" } },
          { type: "text", text: "this" },
        ],
      },
    ]);
    expect(message).toEqual({
      role: "user",
      content: "Look at this",
      parts: [
        { part: { case: "text", value: "Look at " } },
        { part: { case: "image", value: { url: "https://x.example/a.png", detail: "high" } } },
        { part: { case: "text", value: "this" } },
      ],
    });
  });

  it("sends text-only content as text, without parts", () => {
    expect(runMessagesOf([{ role: "user", content: [{ type: "text", text: "hi" }] }])).toEqual([
      { role: "user", content: "hi" },
    ]);
  });

  it("names the part it refuses", () => {
    expect(paramOf([{ role: "user", content: [{ type: "image_url", image_url: {} }] }])).toBe(
      "messages[0].content[0].image_url.url",
    );
    expect(
      paramOf([{ role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png", detail: 3 } }] }]),
    ).toBe("messages[0].content[0].image_url.detail");
    expect(
      paramOf([
        {
          role: "user",
          content: [
            { type: "image_url", image_url: { url: "https://x/y.png" } },
            { type: "input_audio", input_audio: { data: "", format: "wav" } },
          ],
        },
      ]),
    ).toBe("messages[0].content[1]");
    expect(paramOf([{ role: "system", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] }])).toBe(
      "messages[0].content[0]",
    );
  });

  it("takes a tool message's name (LangChain sends it), as text only", () => {
    const messages = [
      { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c", name: "f", content: "ok" },
    ];
    expect(runMessagesOf(messages)[1]).toEqual({ role: "tool", toolCallId: "c", content: "ok" });
    expect(paramOf([{ ...messages[1], name: 5 }])).toBe("messages[0].name");
  });
});
